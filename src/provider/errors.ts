/**
 * The provider error taxonomy: every failure of a provider call — an error answer, a
 * timeout, a dropped connection, a malformed body, a local pre-check — becomes one
 * ProviderError whose `type` names what happened. Retry policies match on `type`
 * (never on class names, which minifiers and bundlers change), and `retryable` /
 * `mayHaveTakenEffect` say whether a retry is useful and whether it must reuse the
 * idempotency key. The types and what each provider code means are declared in
 * shared/failures.ts; this file (with provider/classification.ts for the wording) is the only place that reads an answer into one of them.
 *
 * Messages are built from the type, the endpoint, the status, the provider's message
 * code and the names of the fields it rejected — never from request bodies, headers,
 * the provider's free text or response data, so no secret, PAN or CVV can leak into
 * logs or workflow history.
 */
import { PROVIDER_ERROR_TYPES, shortfallOf, type ProviderErrorType } from '../shared/failures';
import { classifyMessage, messageCode } from './classification';
import { errorsOf, type FailureEnvelope } from './field-errors';
import { providerText } from './provider-text';
import { parseResetHeader, type HeaderBag } from './rate-headers';

interface Traits {
  /** A later attempt (same input, same idempotency key) can succeed. */
  retryable: boolean;
  /** The provider may have applied the call: only an idempotent retry is safe. */
  mayHaveTakenEffect: boolean;
}

const yes = true;
const no = false;

/** Default traits per type; a few are refined per instance (e.g. a refused connection never sent anything). */
export const ERROR_TRAITS: Readonly<Record<ProviderErrorType, Traits>> = {
  RateLimited: { retryable: yes, mayHaveTakenEffect: no },
  InvalidSignature: { retryable: no, mayHaveTakenEffect: no },
  IpNotWhitelisted: { retryable: no, mayHaveTakenEffect: no },
  // The retry signs again with a fresh nonce, so it cannot collide twice.
  NonceReused: { retryable: yes, mayHaveTakenEffect: no },
  IdempotencyConflict: { retryable: no, mayHaveTakenEffect: no },
  // The first attempt under this key is still running and may yet take effect: the retry reconciles
  // first, then asks again; it returns the first attempt's outcome.
  IdempotencyInProgress: { retryable: yes, mayHaveTakenEffect: yes },
  IdempotencyKeyTerminal: { retryable: no, mayHaveTakenEffect: no },
  InsufficientFunds: { retryable: no, mayHaveTakenEffect: no },
  PlanUnavailable: { retryable: no, mayHaveTakenEffect: no },
  CardholderNotApproved: { retryable: no, mayHaveTakenEffect: no },
  CardLimitReached: { retryable: no, mayHaveTakenEffect: no },
  DuplicateCardholder: { retryable: no, mayHaveTakenEffect: no },
  InvalidState: { retryable: no, mayHaveTakenEffect: no },
  ValidationFailed: { retryable: no, mayHaveTakenEffect: no },
  // The same input fails again; the caller refreshes its BIN cache and decides.
  StaleCardBin: { retryable: no, mayHaveTakenEffect: no },
  NotFound: { retryable: no, mayHaveTakenEffect: no },
  // The sandbox answers half of its injected 500s after the side effect took place.
  ServerError: { retryable: yes, mayHaveTakenEffect: yes },
  Timeout: { retryable: yes, mayHaveTakenEffect: yes },
  NetworkError: { retryable: yes, mayHaveTakenEffect: yes },
  // A 2xx whose body we cannot read: the call did happen, and repeating it will not fix the body.
  InvalidResponse: { retryable: no, mayHaveTakenEffect: yes },
  FileTooLarge: { retryable: no, mayHaveTakenEffect: no },
  UploadUrlExpired: { retryable: yes, mayHaveTakenEffect: no },
};

export interface ProviderErrorInit {
  type: ProviderErrorType;
  /** Which endpoint (ENDPOINTS key) or local step failed. */
  endpoint?: string;
  status?: number;
  /** The provider's message code, e.g. INSUFFICIENT_FUNDS. */
  code?: string;
  /** The provider's field → rule map (ValidationFailed, StaleCardBin). */
  errors?: Record<string, string>;
  retryable?: boolean;
  mayHaveTakenEffect?: boolean;
  /** RateLimited: epoch ms when the window resets. */
  resetAt?: number;
  /** RateLimited: how long to wait, from the answer (header or message). */
  retryAfterMs?: number;
  /** InsufficientFunds: how much the wallet was missing, cents, when the provider says. */
  shortfall?: number;
  /** Low-level cause (network/timeouts only; never carries request data). */
  cause?: unknown;
}

export class ProviderError extends Error {
  readonly type: ProviderErrorType;
  readonly endpoint?: string;
  readonly status?: number;
  readonly code?: string;
  readonly errors?: Record<string, string>;
  readonly retryable: boolean;
  readonly mayHaveTakenEffect: boolean;
  readonly resetAt?: number;
  readonly retryAfterMs?: number;
  readonly shortfall?: number;

  constructor(init: ProviderErrorInit) {
    super(describe(init), init.cause === undefined ? undefined : { cause: init.cause });
    // A fixed name (not the constructor's), so logs read the same after minification.
    this.name = 'ProviderError';
    const traits = ERROR_TRAITS[init.type];
    this.type = init.type;
    this.endpoint = init.endpoint;
    this.status = init.status;
    this.code = init.code;
    this.errors = init.errors;
    this.retryable = init.retryable ?? traits.retryable;
    this.mayHaveTakenEffect = init.mayHaveTakenEffect ?? traits.mayHaveTakenEffect;
    this.resetAt = init.resetAt;
    this.retryAfterMs = init.retryAfterMs;
    this.shortfall = init.shortfall;
  }

  /** What survives serialisation (activity failure details, logs). */
  toJSON(): Record<string, unknown> {
    return {
      type: this.type,
      message: this.message,
      endpoint: this.endpoint,
      status: this.status,
      code: this.code,
      errors: this.errors,
      retryable: this.retryable,
      mayHaveTakenEffect: this.mayHaveTakenEffect,
      resetAt: this.resetAt,
      retryAfterMs: this.retryAfterMs,
      shortfall: this.shortfall,
    };
  }
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(PROVIDER_ERROR_TYPES);

/** True for any ProviderError, judged by its `type` (works across bundles and realms). */
export function isProviderError(err: unknown, type?: ProviderErrorType): err is ProviderError {
  if (typeof err !== 'object' || err === null) return false;
  const t = (err as { type?: unknown }).type;
  if (typeof t !== 'string' || !KNOWN_TYPES.has(t)) return false;
  return type === undefined || t === type;
}

function describe(init: ProviderErrorInit): string {
  const parts = [`${init.type}`];
  if (init.endpoint) parts.push(`on ${init.endpoint}`);
  const detail: string[] = [];
  if (init.status !== undefined) detail.push(`HTTP ${init.status}`);
  if (init.code) detail.push(init.code);
  if (detail.length > 0) parts.push(`(${detail.join(' ')})`);
  if (init.errors && Object.keys(init.errors).length > 0) parts.push(`fields: ${Object.keys(init.errors).join(', ')}`);
  if (init.resetAt !== undefined) parts.push(`resets at ${new Date(init.resetAt).toISOString()}`);
  return parts.join(' ');
}

// ---------------------------------------------------------------------------
// Mapping the provider's answers
// ---------------------------------------------------------------------------

/** The endpoint a call went to, as far as the mapping needs to know it. */
export interface EndpointRef {
  key: string;
  method: string;
  /** Path template, e.g. /cards/:cardId/funding */
  path: string;
}

/**
 * When neither code nor wording is known (a proxy page, a future message) the status decides,
 * choosing the reading that makes a retry policy do the safe thing.
 */
function typeByStatus(status: number): ProviderErrorType {
  if (status === 400) return 'ValidationFailed';
  if (status === 401 || status === 403) return 'InvalidSignature';
  if (status === 404) return 'NotFound';
  if (status === 408) return 'Timeout';
  // The spec's 409 has four meanings; one we cannot read is "in progress" until proven otherwise: the
  // retry reconciles under the key (a conflict is then shown by the record or the same POST's wording).
  if (status === 409) return 'IdempotencyInProgress';
  if (status === 410) return 'UploadUrlExpired';
  if (status === 413) return 'FileTooLarge';
  if (status === 415) return 'ValidationFailed';
  if (status === 422) return 'InvalidState';
  if (status === 429) return 'RateLimited';
  if (status >= 500) return 'ServerError';
  return 'InvalidResponse';
}

/** POST /cards reports a stale or unknown BIN as a 400 with `cardBinId` in its errors map. */
function isStaleCardBin(endpoint: EndpointRef | undefined, errors: Record<string, string> | undefined): boolean {
  return (
    endpoint !== undefined &&
    endpoint.method.toUpperCase() === 'POST' &&
    endpoint.path === '/cards' &&
    errors !== undefined &&
    'cardBinId' in errors
  );
}

/**
 * THE mapping: a non-success answer (status, parsed envelope or undefined for a non-JSON
 * body, response headers, endpoint) → ProviderError. `status` is the HTTP status, or the
 * envelope's code when a 2xx carried a failure envelope.
 */
export function errorFromResponse(
  status: number,
  envelope: FailureEnvelope | undefined,
  headers: HeaderBag,
  endpoint?: EndpointRef,
  now: number = Date.now(),
): ProviderError {
  const message = typeof envelope?.message === 'string' ? envelope.message : '';
  // Kept, so scrubbed like any text of the provider's (a code word may carry what it was sent).
  const code = scrubbed(messageCode(message));
  const errors = errorsOf(envelope);
  // 429 is a rate limit whatever it says; a 5xx is a server error whatever it says.
  const byWords = status === 429 || status >= 500 ? undefined : classifyMessage(message, endpoint);
  // The spec's explicit rule wins over any wording: a 400 on POST /cards naming cardBinId is a stale BIN.
  const type: ProviderErrorType = status === 400 && isStaleCardBin(endpoint, errors) ? 'StaleCardBin' : (byWords ?? typeByStatus(status));
  // A 4xx is a refusal: whatever we could not classify, the provider did not apply it.
  const refused = type === 'InvalidResponse' && status >= 400 && status < 500 ? { mayHaveTakenEffect: false } : {};
  const shortfall = type === 'InsufficientFunds' ? shortfallOf(message) : undefined;
  const base = { type, endpoint: endpoint?.key, status, code, errors, ...refused, ...(shortfall === undefined ? {} : { shortfall }) };
  if (type === 'RateLimited') return new ProviderError({ ...base, ...rateLimitTiming(envelope?.message, headers, now) });
  return new ProviderError(base);
}

function scrubbed(text: string | undefined): string | undefined {
  return text === undefined ? undefined : providerText(text);
}

/** A failure before or during the exchange (no answer): refused, reset, timed out, aborted. */
export function errorFromTransportFailure(err: unknown, endpoint?: EndpointRef): ProviderError {
  const code = errorCode(err);
  const base = { endpoint: endpoint?.key, code, cause: err };
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new ProviderError({ ...base, type: 'Timeout', mayHaveTakenEffect: false });
  if (isTimeoutCode(code) || isAbort(err)) return new ProviderError({ ...base, type: 'Timeout' });
  // Nothing reached the provider: the retry cannot double anything.
  if (code !== undefined && NEVER_SENT_CODES.has(code)) {
    return new ProviderError({ ...base, type: 'NetworkError', mayHaveTakenEffect: false });
  }
  return new ProviderError({ ...base, type: 'NetworkError' });
}

/** The code of an InvalidResponse whose 2xx body is not the `{ code, message, data }` envelope. */
export const NOT_AN_ENVELOPE = 'NOT_AN_ENVELOPE';

/** A 2xx whose body is not the envelope or whose data does not match the schema. */
export function invalidResponse(
  endpoint: string | undefined,
  status: number | undefined,
  what: string,
  errors?: Record<string, string>,
  traits?: Partial<Traits>,
): ProviderError {
  return new ProviderError({ type: 'InvalidResponse', endpoint, status, code: what, errors, ...traits });
}

const NEVER_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_DESTROYED',
  'UND_ERR_CLOSED',
]);

function isTimeoutCode(code: string | undefined): boolean {
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT';
}

function isAbort(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError' || errorCode(err) === 'UND_ERR_ABORTED';
}

/** The error code of the error or of its cause (undici wraps socket errors). */
function errorCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function rateLimitTiming(message: unknown, headers: HeaderBag, now: number): { resetAt?: number; retryAfterMs?: number } {
  const fromHeader = parseResetHeader(headers);
  // "retry in 12 seconds", "please wait 12s", "try again after 12 sec": the spec says only that it states the seconds.
  // The last figure in seconds: "limit of 70 per 60s reached, retry in 12 seconds" waits 12.
  const figures = typeof message === 'string' ? [...message.matchAll(/(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b/gi)] : [];
  const seconds = figures.at(-1)?.[1];
  const fromMessage = seconds !== undefined ? now + Number(seconds) * 1000 : undefined;
  const resetAt = fromHeader ?? fromMessage;
  return { resetAt, retryAfterMs: resetAt !== undefined ? Math.max(0, resetAt - now) : undefined };
}

// ---------------------------------------------------------------------------
// Failures found before any request is sent
// ---------------------------------------------------------------------------

/** The last answer said the window is spent: fail as the provider would, without spending a request. */
export function rateBudgetSpent(endpoint: string, resetAt: number, now: number): ProviderError {
  return new ProviderError({ type: 'RateLimited', endpoint, code: 'RATE_BUDGET_SPENT', resetAt, retryAfterMs: Math.max(0, resetAt - now) });
}

/** Input the provider would refuse with 400, caught locally (the field map names the rule). */
export function localValidationFailed(endpoint: string | undefined, errors: Record<string, string>): ProviderError {
  return new ProviderError({ type: 'ValidationFailed', endpoint, code: 'VALIDATION_FAILED', errors });
}

export function fileTooLarge(endpoint: string, sizeBytes: number, maxBytes: number): ProviderError {
  return new ProviderError({
    type: 'FileTooLarge',
    endpoint,
    code: 'FILE_TOO_LARGE',
    errors: { bytes: `${sizeBytes} exceeds the maximum of ${maxBytes}` },
  });
}
