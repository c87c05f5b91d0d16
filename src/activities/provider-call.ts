/**
 * The one place where a provider failure becomes a Temporal failure. The ProviderError's
 * `type` becomes the ApplicationFailure's type (retry policies and workflows match on it),
 * its traits decide `nonRetryable`, and a 429 carries `nextRetryDelay` until the window's reset.
 * Messages and details hold no request data, so nothing sensitive reaches history.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { isProviderError, type ProviderError } from '../provider/errors';
import { randomJitter, retryDelayFor } from '../provider/rate-budget';

/** Added to a 429's wait so that many workers do not hit the fresh window together. */
export const RATE_LIMIT_JITTER_MS = 1000;

export interface ProviderFailureDetails {
  status?: number;
  code?: string;
  errors?: Record<string, string>;
  resetAt?: number;
  retryAfterMs?: number;
  /** InsufficientFunds: how much the wallet was missing, cents, when the provider said. */
  shortfall?: number;
  mayHaveTakenEffect: boolean;
  endpoint?: string;
}

export function toApplicationFailure(err: ProviderError, now = Date.now()): ApplicationFailure {
  const details: ProviderFailureDetails = {
    status: err.status,
    code: err.code,
    errors: err.errors,
    resetAt: err.resetAt,
    retryAfterMs: err.retryAfterMs,
    shortfall: err.shortfall,
    mayHaveTakenEffect: err.mayHaveTakenEffect,
    endpoint: err.endpoint,
  };
  return ApplicationFailure.create({
    type: err.type,
    message: err.message,
    nonRetryable: !err.retryable,
    details: [details],
    nextRetryDelay: err.type === 'RateLimited' ? rateLimitDelay(err, now) : undefined,
  });
}

function rateLimitDelay(err: ProviderError, now: number): number {
  const resetAt = err.resetAt ?? now + (err.retryAfterMs ?? 1000);
  return retryDelayFor(resetAt, now, randomJitter(RATE_LIMIT_JITTER_MS));
}

/**
 * Runs one provider call inside an activity: heartbeats while the call is in flight (so a
 * lost worker is noticed within the heartbeat timeout, not the whole start-to-close timeout)
 * and converts provider errors. Exactly one physical attempt; Temporal owns the retries.
 */
export async function providerCall<T>(call: () => Promise<T>): Promise<T> {
  const ctx = currentContext();
  // Each beat repeats the attempt's note (noteAttempt), so the last details the server keeps are it.
  const beat = ctx ? setInterval(() => ctx.heartbeat(attemptNotes.get(ctx)), 1000) : undefined;
  try {
    return await call();
  } catch (err) {
    // An ApplicationFailure is already ours (its type may look like a ProviderError's): it goes as it is.
    throw !(err instanceof ApplicationFailure) && isProviderError(err) ? toApplicationFailure(err) : err;
  } finally {
    if (beat) clearInterval(beat);
  }
}

function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // called outside an activity (e.g. from the operator CLI)
  }
}

/** The attempt number of the running activity (1 outside an activity). */
export function currentAttempt(): number {
  return currentContext()?.info.attempt ?? 1;
}

/**
 * What an attempt of a POST left behind, kept in the activity's heartbeat details so that the
 * next attempt reads it: `maybe` once the request may have left, `no` when it failed in a way
 * that proves it took no effect (a 4xx, a refused connection). A lost heartbeat leaves the
 * earlier note, or none: both read as `maybe`, the safe side.
 */
export type AttemptNote = { sent: 'maybe' | 'no' };
const attemptNotes = new WeakMap<Context, AttemptNote>();

export function noteAttempt(note: AttemptNote): void {
  const ctx = currentContext();
  if (!ctx) return;
  attemptNotes.set(ctx, note);
  ctx.heartbeat(note);
}

/** True when an earlier attempt of this activity may have reached the provider and taken effect. */
export function earlierAttemptMayHaveTakenEffect(): boolean {
  const ctx = currentContext();
  if (!ctx || ctx.info.attempt <= 1) return false;
  return (ctx.info.heartbeatDetails as AttemptNote | undefined)?.sent !== 'no';
}
