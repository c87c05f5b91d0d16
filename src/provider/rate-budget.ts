/**
 * What the provider last told us about each endpoint's rate window (X-RateLimit-*
 * headers arrive on every answer). With it a caller can fail fast as RateLimited when
 * the window is known to be spent, instead of spending a request on a certain 429.
 * The provider stays the authority: an unknown or reset window always lets a call through.
 */
import { numericHeader, type HeaderBag } from './rate-headers';

export interface RateWindow {
  limit: number;
  remaining: number;
  /** Epoch ms when the window resets. */
  resetAt: number;
}

export class RateBudget {
  readonly #windows = new Map<string, RateWindow>();

  /** Records the window from an answer's headers; answers without the headers change nothing. */
  record(endpointKey: string, headers: HeaderBag): void {
    const window = parseRateHeaders(headers);
    if (window) this.#windows.set(endpointKey, window);
  }

  /** The last known window of an endpoint, if any. */
  get(endpointKey: string): RateWindow | undefined {
    const w = this.#windows.get(endpointKey);
    return w && { ...w };
  }

  /** The resetAt to wait for when the window is spent and not yet reset; undefined when a call may go. */
  check(endpointKey: string, now: number): number | undefined {
    const w = this.#windows.get(endpointKey);
    if (!w || w.remaining > 0 || now >= w.resetAt) return undefined;
    return w.resetAt;
  }
}

/** X-RateLimit-Limit / -Remaining / -Reset (epoch ms), or undefined unless all three are numbers. */
export function parseRateHeaders(headers: HeaderBag): RateWindow | undefined {
  const limit = numericHeader(headers, 'x-ratelimit-limit');
  const remaining = numericHeader(headers, 'x-ratelimit-remaining');
  const resetAt = numericHeader(headers, 'x-ratelimit-reset');
  if (limit === undefined || remaining === undefined || resetAt === undefined) return undefined;
  return { limit, remaining, resetAt };
}

/**
 * How long to wait before retrying a rate-limited call: until the reset, plus the
 * caller's jitter (so many workers do not hit the fresh window at the same instant).
 * Never earlier than the reset, whatever the jitter. Pure: the caller supplies the jitter.
 */
export function retryDelayFor(resetAt: number, now: number, jitterMs: number): number {
  const untilReset = Math.max(0, resetAt - now);
  const jitter = Number.isFinite(jitterMs) ? Math.max(0, jitterMs) : 0;
  return Math.ceil(untilReset + jitter);
}

/** A uniform jitter in [0, maxMs), for retryDelayFor. */
export function randomJitter(maxMs: number): number {
  return Math.floor(Math.random() * Math.max(0, maxMs));
}

/**
 * The fleet-wide rate (per second) of a task queue whose activities call one endpoint limited to
 * `limit` calls per fixed window of `windowMs`. The server's token bucket may dispatch about one
 * second's worth at once after an idle spell, on top of the steady rate, so a window sees at most
 * rate × (window + 1 s); one more call is kept back for a dispatch that reaches the provider just
 * after its window turned. That uses ≥ 95 % of a window of 30 s or more and never exceeds it.
 */
export function fleetRate(limit: number, windowMs: number): number {
  const windowSec = windowMs / 1000;
  return Math.max(limit - 1, 0.1) / (windowSec + 1);
}
