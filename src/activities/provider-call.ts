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
    // An answer we could not read, named by endpoint and field (never by value): a GET's is retried.
    if (isProviderError(err, 'InvalidResponse')) {
      ctx?.log.warn('provider answer unreadable', { endpoint: err.endpoint, fields: Object.keys(err.errors ?? {}), retryable: err.retryable });
    }
    // An ApplicationFailure is already ours (its type may look like a ProviderError's): it goes as it is.
    throw !(err instanceof ApplicationFailure) && isProviderError(err) ? toApplicationFailure(err) : err;
  } finally {
    if (beat) clearInterval(beat);
  }
}

/** Fields a caller sent beyond our model (`extra`), logged by name only: their values may be personal data. */
export function logExtraFields(endpoint: string, extra: Record<string, unknown> | undefined): void {
  if (extra === undefined || Object.keys(extra).length === 0) return;
  currentContext()?.log.info('fields beyond our model sent as given', { endpoint, fields: Object.keys(extra) });
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
 * that proves it took no effect (a 4xx, a refused connection). A note names its attempt: the
 * heartbeat that says `maybe` is sent asynchronously, so a worker killed just after sending can
 * leave an older attempt's `no` on the server. Only the attempt just before may clear the next
 * one; a lost heartbeat, an older note or none reads as `maybe`, the safe side.
 */
export type AttemptNote = { sent: 'maybe' | 'no'; attempt?: number };
const attemptNotes = new WeakMap<Context, AttemptNote>();

export function noteAttempt(note: Pick<AttemptNote, 'sent'>): void {
  const ctx = currentContext();
  if (!ctx) return;
  const named = { ...note, attempt: ctx.info.attempt };
  attemptNotes.set(ctx, named);
  ctx.heartbeat(named);
}

/**
 * Before a request that may take effect. Only a `no` this attempt already wrote needs overwriting
 * (a second POST within one attempt): with none, the next attempt finds an older attempt's note or
 * nothing, and both read as `maybe`. So the first POST of an attempt costs no heartbeat (issue 32).
 */
export function noteMaySend(): void {
  const ctx = currentContext();
  if (ctx && attemptNotes.get(ctx)?.sent === 'no') noteAttempt({ sent: 'maybe' });
}

/** True when an earlier attempt of this activity may have reached the provider and taken effect. */
export function earlierAttemptMayHaveTakenEffect(): boolean {
  const ctx = currentContext();
  if (!ctx || ctx.info.attempt <= 1) return false;
  return !earlierAttemptProvedNothingSent(ctx.info.heartbeatDetails as AttemptNote | undefined, ctx.info.attempt);
}

/** The note proves nothing was sent only when the attempt just before this one wrote it. */
export function earlierAttemptProvedNothingSent(note: AttemptNote | undefined, attempt: number): boolean {
  return note?.sent === 'no' && note.attempt === attempt - 1;
}
