/**
 * Fixed-window rate limits per project and endpoint key (path parameters are normalised by
 * using the endpoint key, so every /cards/{id}/funding call shares one counter).
 * Windows are aligned to multiples of windowMs; Reset is the epoch ms the window ends.
 */
import type { RateLimitTier } from '../provider-api';

export interface RateLimits {
  windowMs: number;
  general: number;
  sensitive: number;
  balance: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetAt: number;
}

export class RateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limits: () => RateLimits,
    private readonly now: () => number,
  ) {}

  /** Counts one request (when allowed) and says whether it may proceed. */
  take(project: string, endpointKey: string, rateClass: RateLimitTier): RateDecision {
    return this.#decide(project, endpointKey, rateClass, true);
  }

  /** The counter's state without counting: for answers given before the caller is known. */
  peek(project: string, endpointKey: string, rateClass: RateLimitTier): RateDecision {
    return this.#decide(project, endpointKey, rateClass, false);
  }

  #decide(project: string, endpointKey: string, rateClass: RateLimitTier, count: boolean): RateDecision {
    const { windowMs, ...perClass } = this.limits();
    const limit = perClass[rateClass];
    const now = this.now();
    const start = now - (now % windowMs);
    const id = `${project}|${endpointKey}`;
    let window = this.#windows.get(id);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      if (count) this.#windows.set(id, window);
    }
    const allowed = window.count < limit;
    if (count && allowed) window.count++;
    return { allowed, limit, remaining: Math.max(0, limit - window.count), resetAt: start + windowMs };
  }
}
