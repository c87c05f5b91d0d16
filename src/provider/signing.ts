/**
 * Request and webhook signing (CONTRACTS §3 and §4), behind one small interface so that
 * another scheme can be configured without touching callers. The secret lives only inside
 * a SigningScheme instance: it is never returned, logged or serialised.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADERS = {
  apiKey: 'x-api-key',
  timestamp: 'x-timestamp',
  nonce: 'x-nonce',
  signature: 'x-signature',
} as const;

/** Allowed distance between the signer's clock and the verifier's. */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60 * 1000;

export interface SignableRequest {
  method: string;
  /** Path from the host, with its query string, e.g. /open-api/v1/cards/crd_1/funding */
  pathWithQuery: string;
  /** The exact bytes sent; empty or undefined when there is no body. */
  body?: string | Buffer;
}

export interface SignedHeaders {
  'x-api-key': string;
  'x-timestamp': string;
  'x-nonce': string;
  'x-signature': string;
}

export type VerifyFailure = 'MISSING_HEADER' | 'STALE_TIMESTAMP' | 'BAD_SIGNATURE' | 'WRONG_API_KEY';
/**
 * `genuine`: set on STALE_TIMESTAMP when the signature itself is right, i.e. the delivery is the
 * provider's, only late (a redelivery of an old event repeated byte for byte). The caller decides.
 */
export type VerifyResult =
  | { ok: true; nonce: string; timestamp: number }
  | { ok: false; reason: VerifyFailure; genuine?: { nonce: string; timestamp: number } };

/** What callers depend on: sign a physical attempt, or verify one. */
export interface SigningScheme {
  /** Fresh nonce, timestamp and signature on every call. */
  sign(req: SignableRequest): SignedHeaders;
  /** Checks headers, timestamp tolerance and signature (constant time). Nonce replay is the caller's to track. */
  verify(req: SignableRequest, headers: Record<string, string | string[] | undefined>): VerifyResult;
}

export interface HmacSchemeOptions {
  apiKey: string;
  secret: string;
  now?: () => number;
  toleranceMs?: number;
}

/** The default scheme: base64(HMAC-SHA256(secret, ts.METHOD.pathWithQuery.nonce[.body])). */
export class HmacSha256Scheme implements SigningScheme {
  readonly #secret: string;
  readonly #apiKey: string;
  readonly #now: () => number;
  readonly #toleranceMs: number;

  constructor(opts: HmacSchemeOptions) {
    this.#secret = opts.secret;
    this.#apiKey = opts.apiKey;
    this.#now = opts.now ?? Date.now;
    this.#toleranceMs = opts.toleranceMs ?? TIMESTAMP_TOLERANCE_MS;
  }

  sign(req: SignableRequest): SignedHeaders {
    const timestamp = String(this.#now());
    const nonce = randomBytes(16).toString('hex');
    return {
      'x-api-key': this.#apiKey,
      'x-timestamp': timestamp,
      'x-nonce': nonce,
      'x-signature': this.#compute(timestamp, nonce, req),
    };
  }

  verify(req: SignableRequest, headers: Record<string, string | string[] | undefined>): VerifyResult {
    const timestamp = single(headers[SIGNATURE_HEADERS.timestamp]);
    const nonce = single(headers[SIGNATURE_HEADERS.nonce]);
    const signature = single(headers[SIGNATURE_HEADERS.signature]);
    if (!timestamp || !nonce || !signature) return { ok: false, reason: 'MISSING_HEADER' };
    // The signature does not cover X-API-Key, and the spec does not say webhooks carry it: optional, but never another project's.
    const apiKey = single(headers[SIGNATURE_HEADERS.apiKey]);
    if (apiKey !== undefined && apiKey !== this.#apiKey) return { ok: false, reason: 'WRONG_API_KEY' };
    const ts = Number(timestamp);
    if (!/^\d{1,16}$/.test(timestamp)) return { ok: false, reason: 'STALE_TIMESTAMP' };
    const stale = Math.abs(this.#now() - ts) > this.#toleranceMs;
    const expected = Buffer.from(this.#compute(timestamp, nonce, req));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      // A forged delivery is refused as stale when it is: the reason never tells a forger more.
      return { ok: false, reason: stale ? 'STALE_TIMESTAMP' : 'BAD_SIGNATURE' };
    }
    if (stale) return { ok: false, reason: 'STALE_TIMESTAMP', genuine: { nonce, timestamp: ts } };
    return { ok: true, nonce, timestamp: ts };
  }

  /** Keeps the secret out of console.log / JSON.stringify of the scheme. */
  toJSON(): Record<string, string> {
    return { scheme: 'hmac-sha256', apiKey: this.#apiKey };
  }

  #compute(timestamp: string, nonce: string, req: SignableRequest): string {
    const mac = createHmac('sha256', this.#secret);
    mac.update(`${timestamp}.${req.method.toUpperCase()}.${req.pathWithQuery}.${nonce}`);
    const body = req.body ?? '';
    if (body.length > 0) {
      mac.update('.');
      mac.update(body);
    }
    return mac.digest('base64');
  }
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Remembers nonces for the tolerance window so that a replay is refused. In-memory:
 * each process keeps its own, which is what a provider edge or one bridge replica needs;
 * the bridge's real duplicate defence is eventId de-duplication inside the workflow.
 */
export class NonceCache {
  readonly #seen = new Map<string, number>();
  constructor(
    private readonly windowMs = TIMESTAMP_TOLERANCE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records the nonce; false when it was already seen within the window. */
  claim(nonce: string): boolean {
    const now = this.now();
    this.#evict(now);
    if (this.#seen.has(nonce)) return false;
    this.#seen.set(nonce, now + this.windowMs);
    return true;
  }

  /** True when the nonce was claimed within the window. */
  has(nonce: string): boolean {
    this.#evict(this.now());
    return this.#seen.has(nonce);
  }

  #evict(now: number): void {
    // Map iteration is in insertion order, so expiry times are ascending.
    for (const [nonce, expiresAt] of this.#seen) {
      if (expiresAt > now) break;
      this.#seen.delete(nonce);
    }
  }
}
