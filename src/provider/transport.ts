/**
 * The one signing transport to the provider (stripe-node's HttpClient + the envelope).
 *
 * One call = exactly ONE physical attempt: retries belong to Temporal, whose retry
 * policy reads the ProviderError's `type`. Every attempt is signed afresh (nonce,
 * timestamp, signature) by the SigningScheme, the body is serialised once and those
 * exact bytes are both signed and sent, the envelope is unwrapped here and nowhere else,
 * and every failure leaves as a ProviderError mapped by errors.ts.
 */
import { Pool, type Dispatcher } from 'undici';
import type { SigningScheme } from './signing';
import {
  errorFromResponse,
  NOT_AN_ENVELOPE,
  errorFromTransportFailure,
  invalidResponse,
  isProviderError,
  localValidationFailed,
  rateBudgetSpent,
  type EndpointRef,
} from './errors';
import type { FailureEnvelope } from './field-errors';
import { numericHeader, type HeaderBag } from './rate-headers';
import { RateBudget } from './rate-budget';
import { API_BASE_PATH, IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN } from '../provider-api';

export interface TransportOptions {
  /** Scheme, host and port (an optional path prefix is kept), with or without the trailing /open-api/v1. */
  baseUrl: string;
  signer: SigningScheme;
  /** Deadline of one call: connect, headers and body together. */
  timeoutMs: number;
  /** Keep-alive connections to the provider. */
  connections?: number;
  /** Shared when several transports should see one budget; one is created otherwise. */
  rateBudget?: RateBudget;
  /** Refuse locally (RateLimited) while the last answer said the window is spent. Default true. */
  failFastWhenBudgetSpent?: boolean;
  /** Told of every call's outcome (metrics); never of its data. */
  observer?: ProviderCallObserver;
  now?: () => number;
}

/** What the transport reports of each call: endpoint names, statuses and timings only. */
export interface ProviderCallObserver {
  answered(endpoint: string, status: number, seconds: number, rateRemaining: number | undefined): void;
  unanswered(endpoint: string, seconds: number): void;
  refusedLocally(endpoint: string): void;
}

export type QueryValue = string | number | boolean | undefined;

export interface TransportRequest {
  /** ENDPOINTS key: names the rate counter and the error's endpoint. */
  endpointKey: string;
  method: string;
  /** Concrete path below the API prefix, parameters already encoded, e.g. /cards/crd_1/funding */
  path: string;
  /** The path template (e.g. /cards/:cardId), for error mapping; defaults to `path`. */
  pathTemplate?: string;
  query?: Record<string, QueryValue>;
  /** Serialised as JSON once; those bytes are signed and sent. */
  body?: unknown;
  idempotencyKey?: string;
  timeoutMs?: number;
}

export interface TransportResponse {
  status: number;
  /** The envelope's `data`, not yet validated. */
  data: unknown;
  headers: HeaderBag;
}

export class ProviderTransport {
  readonly #pool: Pool;
  readonly #signer: SigningScheme;
  readonly #origin: string;
  readonly #pathPrefix: string;
  readonly #timeoutMs: number;
  readonly #failFast: boolean;
  readonly #now: () => number;
  readonly #observer?: ProviderCallObserver;
  readonly rateBudget: RateBudget;

  constructor(opts: TransportOptions) {
    const url = new URL(opts.baseUrl);
    this.#origin = url.origin;
    this.#pathPrefix = apiPathPrefix(url.pathname);
    this.#pool = new Pool(url.origin, {
      connections: opts.connections ?? 16,
      keepAliveTimeout: 30_000,
      // Per-call deadlines are set on each request; these are only the ceiling.
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      connect: { timeout: opts.timeoutMs },
    });
    this.#signer = opts.signer;
    this.#timeoutMs = opts.timeoutMs;
    this.#failFast = opts.failFastWhenBudgetSpent ?? true;
    this.#now = opts.now ?? Date.now;
    this.#observer = opts.observer;
    this.rateBudget = opts.rateBudget ?? new RateBudget();
  }

  /** One signed attempt; resolves with the envelope's data or rejects with a ProviderError. */
  async request(req: TransportRequest): Promise<TransportResponse> {
    const endpoint: EndpointRef = { key: req.endpointKey, method: req.method, path: req.pathTemplate ?? req.path };
    try {
      this.#refuseLocally(req);
    } catch (err) {
      if (isProviderError(err, 'RateLimited')) this.#observer?.refusedLocally(req.endpointKey);
      throw err;
    }
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    const pathWithQuery = this.#pathPrefix + req.path + queryString(req.query);
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    const timeoutMs = req.timeoutMs ?? this.#timeoutMs;
    try {
      const res = await this.#pool.request({
        method: req.method.toUpperCase() as Dispatcher.HttpMethod,
        path: pathWithQuery,
        headers: this.#headers(req, pathWithQuery, body),
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const headers = res.headers as HeaderBag;
      this.rateBudget.record(req.endpointKey, headers);
      this.#observer?.answered(req.endpointKey, res.statusCode, seconds(), numericHeader(headers, 'x-ratelimit-remaining'));
      const text = await readAnswer(res.body, endpoint.key, res.statusCode);
      return { status: res.statusCode, data: unwrapEnvelope(res.statusCode, text, headers, endpoint, this.#now()), headers };
    } catch (err) {
      if (isProviderError(err)) throw err;
      this.#observer?.unanswered(req.endpointKey, seconds());
      throw errorFromTransportFailure(err, endpoint);
    }
  }

  /** Lets in-flight calls finish, then closes the keep-alive connections. */
  async close(): Promise<void> {
    if (!this.#pool.closed) await this.#pool.close();
  }

  /** Keeps the signer (and with it the secret) out of logs and serialisation. */
  toJSON(): Record<string, string> {
    return { transport: 'undici', origin: this.#origin, pathPrefix: this.#pathPrefix };
  }

  /** Failures certain before sending: they must not cost a request or a rate-limit slot. */
  #refuseLocally(req: TransportRequest): void {
    if (req.idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(req.idempotencyKey)) {
      throw localValidationFailed(req.endpointKey, { [IDEMPOTENCY_HEADER]: 'must be 1-64 characters of [a-zA-Z0-9_-]' });
    }
    const now = this.#now();
    const resetAt = this.#failFast ? this.rateBudget.check(req.endpointKey, now) : undefined;
    if (resetAt !== undefined) throw rateBudgetSpent(req.endpointKey, resetAt, now);
  }

  /** Fresh signature headers for this physical attempt. */
  #headers(req: TransportRequest, pathWithQuery: string, body: Buffer | undefined): Record<string, string> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.#signer.sign({ method: req.method.toUpperCase(), pathWithQuery, body }),
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (req.idempotencyKey !== undefined) headers['x-idempotency-key'] = req.idempotencyKey;
    return headers;
  }
}

/**
 * The envelope, in one place: `{code: 0, data}` → data; any failure (an error status, a
 * 2xx carrying a failure envelope, a body that is not JSON) → a ProviderError.
 */
/** The largest answer we read: the provider's are small (a BIN list, a card, a payout); a bigger one is not an answer of its. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * An answer's body as text, read at most MAX_ANSWER_BYTES: a longer one is dropped as it streams in
 * and fails InvalidResponse (a misbehaving proxy or provider must not fill the worker's memory).
 */
export async function readAnswer(body: AsyncIterable<Buffer> & { destroy?: () => void }, endpointKey: string, status: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy?.();
      throw invalidResponse(endpointKey, status, 'ANSWER_TOO_LARGE', { body: `must be at most ${MAX_ANSWER_BYTES} bytes` });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function unwrapEnvelope(status: number, text: string, headers: HeaderBag, endpoint: EndpointRef, now: number): unknown {
  const json = parseObject(text);
  const ok = status >= 200 && status < 300;
  if (!ok) return failWith(errorFromResponse(status, json, headers, endpoint, now));
  if (!json || typeof json.code !== 'number') return failWith(invalidResponse(endpoint.key, status, NOT_AN_ENVELOPE));
  if (json.code === 0) return json.data;
  const failureStatus = json.code >= 400 && json.code < 600 ? json.code : status;
  return failWith(errorFromResponse(failureStatus, json, headers, endpoint, now));
}

function failWith(err: Error): never {
  throw err;
}

/** A JSON object (a provider envelope, or any failure body), or undefined for anything else. */
export function parseObject(text: string): (FailureEnvelope & { data?: unknown }) | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as FailureEnvelope & { data?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.append(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** The base URL's path, whether or not it already ends in /open-api/v1, with the API prefix once. */
export function apiPathPrefix(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, '');
  return trimmed.endsWith(API_BASE_PATH) ? trimmed : trimmed + API_BASE_PATH;
}
