/**
 * A POST that may move money (funding, withdrawal, eSIM purchase and recharge, payouts), never
 * repeated blindly. THE rule of when a record under a key is taken as ours, and who remembers
 * what may have been sent (docs/idempotency.md says the same in words):
 *
 * - **Who remembers.** The workflow: once it has scheduled the POST's activity for a key, every
 *   later scheduling for that key says so (`sentBefore`, workflows/lib/provider.ts), so an
 *   activity scheduled again after a 429 reconciles first although it is attempt 1. Within one
 *   activity, an attempt after one that may have sent it reconciles first too (provider-call.ts:
 *   a note proves "not sent" only for the attempt just before).
 * - **Reconcile first** (`recall`: GET /operations/{key}, or the payout's lookup by merOrderNo):
 *   a record the provider shows to be ours (its fields name our card, amount, order) is the
 *   answer. A record that does not show whose it is is confirmed the one way the spec gives: the
 *   same POST under the same key answers the original (ours) or 409 (another request's). Only an
 *   endpoint the spec calls idempotent is posted again; one it does not (POST /esim/recharge)
 *   ends OutcomeUnknown with the key and what the provider said.
 * - **A failed read after a call that may have taken effect** ends OutcomeUnknown with
 *   `mayHaveTakenEffect: true`, the key and the provider's last word, never the read's own type:
 *   a retryable failure (5xx, 429) is retried (and the retry reconciles first again).
 * - **A refused POST after one that may have taken effect** (issue 51, case 1: an egress IP dropped
 *   from the allow-list, a 404, 400 or 422 from a provider that validates before it replays the key)
 *   says nothing of the earlier attempt: OutcomeUnknown, `mayHaveTakenEffect: true`. Only a refusal
 *   that speaks of the key itself (another request holds it, or its earlier attempt failed) is the answer.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import { isProviderError, type ProviderError } from '../provider/errors';
import type { OperationAnswer } from '../provider/answers';
import { FailureType } from '../shared/failures';
import { earlierAttemptMayHaveTakenEffect, noteAttempt, noteMaySend, toApplicationFailure } from './provider-call';

/** An earlier outcome found under the key, and whether the provider showed it to be for this request. */
export interface Recalled<T> {
  outcome: T;
  /** The provider's record names what we asked (card and amount, esimNo, payout fields): no POST needed to confirm. */
  ours: boolean;
}

export interface ReconcilingPost<T> {
  idempotencyKey: string;
  /** The endpoint, for the failure an operator reads. */
  endpoint: string;
  /** The spec lists an idempotency key for the endpoint: a POST again under the same key is safe. */
  idempotentBySpec: boolean;
  /** The outcome an earlier attempt left; undefined when the provider has nothing to show. */
  recall: () => Promise<Recalled<T> | undefined>;
  post: () => Promise<T>;
  /** Recall before the first POST too: what is looked up by our own id (a payout's merOrderNo) may have been created under another key. */
  recallFirst?: boolean;
  /** The workflow scheduled an activity for this key before (a re-scheduling after a 429): it may have sent the POST. */
  sentBefore?: boolean;
  /** Records the attempt before anything is sent (activities/attempts.ts): from then on no stop of the flow loses it. */
  beforeSend?: () => Promise<void>;
}

export async function postReconcilingFirst<T>(spec: ReconcilingPost<T>): Promise<T> {
  const maySent = spec.sentBefore === true || earlierAttemptMayHaveTakenEffect();
  if (spec.recallFirst || maySent) {
    activityLog('reconciling an earlier attempt before sending again', spec.idempotencyKey);
    const known = await recallAfter(spec, maySent);
    if (known?.ours) return known.outcome;
    if (!spec.idempotentBySpec && known) throw outcomeUnknown(spec, 'the provider records an outcome under this key that it does not show to be this request', providerSaid(known.outcome));
    if (!spec.idempotentBySpec && maySent) throw outcomeUnknown(spec, 'an earlier attempt may have reached the provider, which shows no record of it');
    // Idempotent by the spec: the POST under the same key answers the original (ours) or 409 (not ours).
  }
  await spec.beforeSend?.();
  noteMaySend();
  try {
    return await spec.post();
  } catch (err) {
    if (!isProviderError(err)) throw err;
    if (!err.mayHaveTakenEffect) noteAttempt({ sent: 'no' });
    if (maySent) refusedAfterAnEffect(spec, err);
    if (err.type !== 'InvalidResponse') throw err;
    activityLog('answer unreadable after the call may have taken effect: reconciling', spec.idempotencyKey);
    const known = await recallAfter(spec, true);
    if (known?.ours) return known.outcome;
    if (!spec.idempotentBySpec) throw outcomeUnknown(spec, known ? 'its answer could not be read and the record under its key does not show it to be this request' : 'its answer could not be read and the provider shows no record of it', known && providerSaid(known.outcome));
    // Idempotent by the spec: the next attempt asks again, then posts under the same key, whose
    // answer is the original one. Bounded by the flow's deadline, not by a count.
    throw ApplicationFailure.create({
      type: FailureType.InvalidResponse,
      message: `the answer to ${spec.endpoint} could not be read and the provider shows no outcome of this request under key ${spec.idempotencyKey} yet: asking again under the same key`,
      details: [{ idempotencyKey: spec.idempotencyKey, endpoint: spec.endpoint, mayHaveTakenEffect: true }],
    });
  }
}

/**
 * The recall, when a call under the key may already have taken effect: a definitive failure of
 * the read itself (403, 404 of an order the record names, a conflict we cannot read) says
 * nothing of the call, so it ends OutcomeUnknown; a failure a retry may mend (5xx, timeout, 429)
 * goes on as it is, marked as following a call that may have taken effect, and the retry (or the
 * workflow's re-scheduling after a 429) reconciles first again.
 */
function recallAfter<T>(spec: ReconcilingPost<T>, maySent: boolean): Promise<Recalled<T> | undefined> {
  return maySent ? readAfterEffect(spec, spec.recall) : spec.recall();
}

/** A read that follows a call under `spec`'s key that may have taken effect: its failures say so (recallAfter). */
export async function readAfterEffect<R>(spec: Pick<ReconcilingPost<unknown>, 'idempotencyKey' | 'endpoint'>, read: () => Promise<R>): Promise<R> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof ApplicationFailure || !isProviderError(err)) throw err;
    if (err.retryable) throw afterAnEffect(err);
    throw outcomeUnknown(spec, `reading what became of it failed (${err.type}${err.status ? ` ${err.status}` : ''})`, { readFailure: err.type, status: err.status, code: err.code });
  }
}

/** Refusals that speak of the key itself: its answer, even after an attempt that may have taken effect. */
const ABOUT_THE_KEY: ReadonlySet<string> = new Set([FailureType.IdempotencyConflict, FailureType.IdempotencyKeyTerminal, FailureType.IdempotencyInProgress]);

/**
 * Throws OutcomeUnknown when `err` is a definitive refusal of a POST sent after an attempt under the
 * same key that may have taken effect, unless it speaks of the key itself; returns otherwise: a
 * retryable failure is retried (the retry reconciles first again), and one that may itself have taken
 * effect (an answer cut off or unreadable) keeps its own handling.
 */
export function refusedAfterAnEffect(spec: Pick<ReconcilingPost<unknown>, 'idempotencyKey' | 'endpoint'>, err: ProviderError): void {
  if (err.retryable || err.mayHaveTakenEffect || ABOUT_THE_KEY.has(err.type)) return;
  throw outcomeUnknown(spec, `a later attempt under its key was refused (${err.type}${err.status ? ` ${err.status}` : ''}) after an earlier one may have reached the provider, and the refusal says nothing of that one`, { refusal: err.type, status: err.status, code: err.code });
}

/** A retryable read failure after a call that may have taken effect: the same failure, saying so. */
function afterAnEffect(err: ProviderError): ApplicationFailure {
  const failure = toApplicationFailure(err);
  const [details] = (failure.details ?? []) as Array<Record<string, unknown>>;
  return ApplicationFailure.create({
    type: failure.type ?? undefined,
    message: `${failure.message} (reading what became of a call that may have taken effect)`,
    nonRetryable: failure.nonRetryable ?? undefined,
    nextRetryDelay: failure.nextRetryDelay ?? undefined,
    details: [{ ...details, mayHaveTakenEffect: true }],
  });
}

/** What an operator reads of the provider's record: its status and ids, never a body. */
function providerSaid(outcome: unknown): Record<string, unknown> | undefined {
  if (typeof outcome !== 'object' || outcome === null) return undefined;
  const { status, operationId, orderNo, merOrderNo } = outcome as Record<string, unknown>;
  return Object.fromEntries(Object.entries({ status, operationId, orderNo, merOrderNo }).filter(([, v]) => v !== undefined));
}

/** Recall through GET /operations/{key}: `reconcile` reads the record into an outcome (and whether it is ours), or undefined when it cannot. */
export function fromOperation<T>(
  provider: ProviderClient,
  idempotencyKey: string,
  reconcile: (earlier: OperationAnswer) => Promise<Recalled<T> | undefined> | Recalled<T> | undefined,
): () => Promise<Recalled<T> | undefined> {
  return async () => {
    const earlier = await readOperation(provider, idempotencyKey);
    return earlier && (await reconcile(earlier));
  };
}

function activityLog(message: string, idempotencyKey: string): void {
  try {
    Context.current().log.info(message, { idempotencyKey });
  } catch {
    // outside an activity (the operator CLI): nothing to log to
  }
}

/** The provider's record of a key; undefined when it has none. */
export async function readOperation(provider: ProviderClient, idempotencyKey: string): Promise<OperationAnswer | undefined> {
  try {
    return await provider.getOperation(idempotencyKey);
  } catch (err) {
    if (isProviderError(err, 'NotFound')) return undefined;
    throw err;
  }
}

/**
 * Fields the provider chose to show that contradict our request: the key was used for
 * something else. Pass only fields the spec shows; one the provider did not show contradicts
 * nothing, and `same` decides equality where the provider may present a value otherwise (a
 * masked account number).
 */
export function contradicts(shown: Record<string, unknown>, ours: Record<string, unknown>, same: (field: string, shown: unknown, ours: unknown) => boolean = (_, a, b) => a === b): boolean {
  return Object.entries(ours).some(([field, value]) => shown[field] !== undefined && shown[field] !== null && !same(field, shown[field], value));
}

/** An operation found under our key that is not ours. */
export function idempotencyConflict(idempotencyKey: string, field?: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.IdempotencyConflict,
    message: `idempotency key ${idempotencyKey} was used for a different request${field ? ` (${field} differs)` : ''}`,
    nonRetryable: true,
    details: [{ idempotencyKey }],
  });
}

/** Posting again could move money twice and asking could not settle it: stop, and say where to look. */
export function outcomeUnknown(spec: Pick<ReconcilingPost<unknown>, 'idempotencyKey' | 'endpoint'>, why: string, providerSaid?: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.OutcomeUnknown,
    message: `${spec.endpoint} under key ${spec.idempotencyKey}: ${why}; it is not sent again. It stays an open item until the provider's final word or an operator's settlement (starter open; starter settle ${spec.idempotencyKey}); do not try again under a new key before it is settled`,
    nonRetryable: true,
    details: [{ idempotencyKey: spec.idempotencyKey, endpoint: spec.endpoint, mayHaveTakenEffect: true, providerSaid }],
  });
}
