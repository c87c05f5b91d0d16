/**
 * Starts a sandbox on an ephemeral port plus a webhook receiver, and gives the tests a
 * signed API caller (the independent signer), the control API, and polling helpers.
 */
import { startSandbox } from '../../../src/sandbox';
import { SandboxControlClient } from '../../../src/sandbox/control-client';
import { WebhookReceiver } from './receiver';
import { signHeaders } from './signer';

export const API_KEY = 'key_test';
export const API_SECRET = 'secret_test';
export const WEBHOOK_SECRET = 'whsec_test';
export const BASE = '/open-api/v1';

/** Fast timings for tests; each suite may override. */
export const FAST_CONFIG = {
  cardProvisioningMs: 20,
  kycReviewMs: 30,
  esimIssueMs: 20,
  esimWaitMs: 1000,
  payoutProcessingMs: 30,
  webhook: { retryBaseMs: 20 },
};

export interface ApiAnswer<T = any> {
  status: number;
  headers: Headers;
  body: { code: number; message: string; data?: T; errors?: Record<string, string> };
}

export interface CallOptions {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string | Buffer;
  contentType?: string | null;
  idempotencyKey?: string;
  headers?: Record<string, string>;
  /** Override what is signed / sent. */
  sign?: { nonce?: string; timestamp?: number; secret?: string; apiKey?: string } | false;
}

export class Harness {
  url = '';
  receiver = new WebhookReceiver(WEBHOOK_SECRET);
  #control?: SandboxControlClient;
  #close?: () => Promise<void>;

  async start(): Promise<void> {
    await this.receiver.start();
    const sb = await startSandbox({ port: 0, apiKey: API_KEY, apiSecret: API_SECRET, webhookSecret: WEBHOOK_SECRET, webhookUrl: this.receiver.url });
    this.url = sb.url;
    this.#control = new SandboxControlClient(sb.url);
    this.#close = sb.close;
    await this.reset();
  }

  /** Fixtures again, with fast timings and the given overrides. */
  async reset(config: Record<string, unknown> = {}): Promise<void> {
    await this.control('POST', '/reset');
    const res = await this.control('PUT', '/config', deepMerge(FAST_CONFIG, config));
    if (res.status !== 200) throw new Error(`config refused: ${JSON.stringify(res.body)}`);
    this.receiver.clear();
  }

  async stop(): Promise<void> {
    await this.#close?.();
    await this.receiver.stop();
  }

  async api<T = any>(method: string, path: string, o: CallOptions = {}): Promise<ApiAnswer<T>> {
    const pathWithQuery = BASE + path;
    const raw = o.rawBody ?? (o.body === undefined ? '' : JSON.stringify(o.body));
    const headers: Record<string, string> = {};
    if (raw.length > 0 && o.contentType !== null) headers['content-type'] = o.contentType ?? 'application/json';
    if (o.idempotencyKey !== undefined) headers['x-idempotency-key'] = o.idempotencyKey;
    if (o.sign !== false) {
      Object.assign(headers, signHeaders(method, pathWithQuery, raw, { apiKey: o.sign?.apiKey ?? API_KEY, secret: o.sign?.secret ?? API_SECRET, nonce: o.sign?.nonce, timestamp: o.sign?.timestamp }));
    }
    Object.assign(headers, o.headers ?? {});
    const res = await fetch(this.url + pathWithQuery, { method, headers, body: raw.length > 0 ? raw : undefined });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }

  /** Any control call and its answer, refused ones included: these tests exercise the control API itself. */
  control<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    return this.#control!.request<T>(method, path, body);
  }

  /** A card that reached ENABLE. */
  async enabledCard(overrides: Record<string, unknown> = {}): Promise<any> {
    const res = await this.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 10_000, firstName: 'Ada', lastName: 'Lovelace', ...overrides } });
    if (res.status !== 200) throw new Error(`card not created: ${JSON.stringify(res.body)}`);
    return waitFor(async () => {
      const card = await this.api('GET', `/cards/${res.body.data.cardId}`);
      return card.body.data.status === 'ENABLE' ? card.body.data : undefined;
    });
  }

  /** Presign + PUT; returns the fileToken. */
  async upload(type: string, contentType = 'image/png', bytes: Buffer = Buffer.from('fake-image-bytes')): Promise<string> {
    const pre = await this.api('POST', '/kyc/presignedUploads', { body: { fileName: 'doc', contentType, type } });
    if (pre.status !== 200) throw new Error(JSON.stringify(pre.body));
    const put = await fetch(pre.body.data.uploadUrl, { method: 'PUT', headers: { 'content-type': contentType }, body: bytes });
    if (put.status !== 200) throw new Error(`upload failed ${put.status}`);
    return pre.body.data.fileToken;
  }

  async ledgerViolations(): Promise<unknown[]> {
    return (await this.control<{ violations: unknown[] }>('GET', '/ledger')).body.violations;
  }
}

/** Polls until fn returns something other than undefined (or the timeout passes). */
export async function waitFor<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 5000, everyMs = 15): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function deepMerge(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = v && typeof v === 'object' && !Array.isArray(v) && typeof a[k] === 'object' ? deepMerge(a[k], v) : v;
  return out;
}

/** A complete, valid KYC form (tokens to be filled in). */
export function kycForm(tokens: { idFrontToken: string; idBackToken?: string; attachments: string[] }, overrides: Record<string, unknown> = {}) {
  return {
    firstName: 'Mei', lastName: 'Tanaka', fullName: '田中 芽衣', fullNameEn: 'Mei Tanaka', mobilePrefix: '81', mobile: '9012345678',
    email: 'mei@example.com', gender: 'FEMALE', birthDate: '1990-04-01', occupation: 'FREELANCER', nationality: 'JP',
    idType: 'PASSPORT', idNumber: `P${Math.random().toString().slice(2, 10)}`, idExpiryDate: '2035-01-01', country: 'JP', state: 'Tokyo',
    city: 'Shibuya', street: '1-2-3 Dogenzaka', address: '東京都渋谷区道玄坂1-2-3', addressEn: '1-2-3 Dogenzaka, Shibuya, Tokyo',
    postalCode: '150-0043', sourceOfFund: 'SALARY_OR_EMPLOYMENT_INCOME', livingCountry: 'JP', ...tokens, ...overrides,
  };
}
