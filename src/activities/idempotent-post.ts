/**
 * A POST that may move money (funding, withdrawal, eSIM purchase and recharge, payouts), never
 * repeated blindly. Before it is sent again after an outcome we could not learn (an earlier
 * attempt that may have reached the provider, an answer we could not read), the provider says
 * first what became of it (`recall`: GET /operations/{key}, or the payout's lookup):
 * - a recorded outcome is the answer: the flow completes with whatever ids the provider shows;
 * - no record: an endpoint the spec calls idempotent is posted again under the same key (the
 *   provider answers the original, or applies it once); one it does not (POST /esim/recharge) is
 *   not posted again: the call ends OutcomeUnknown, with the key and what the provider said.
 *
 * Only the fields the spec shows are compared with our request (`contradicts`): a field the
 * provider does not show, or words it differently, is no conflict.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import { isProviderError } from '../provider/errors';
import type { OperationAnswer } from '../provider/answers';
import { FailureType } from '../shared/failures';
import { earlierAttemptMayHaveTakenEffect, noteAttempt } from './provider-call';

export interface ReconcilingPost<T> {
  idempotencyKey: string;
  /** The endpoint, for the failure an operator reads. */
  endpoint: string;
  /** The spec lists an idempotency key for the endpoint: a POST again under the same key is safe. */
  idempotentBySpec: boolean;
  /** The outcome an earlier attempt left; undefined when the provider has nothing to show. */
  recall: () => Promise<T | undefined>;
  post: () => Promise<T>;
  /** Recall before the first POST too: what is looked up by our own id (a payout's merOrderNo) may have been created under another key. */
  recallFirst?: boolean;
}

export async function postReconcilingFirst<T>(spec: ReconcilingPost<T>): Promise<T> {
  if (spec.recallFirst || earlierAttemptMayHaveTakenEffect()) {
    activityLog('reconciling an earlier attempt before sending again', spec.idempotencyKey);
    const known = await spec.recall();
    if (known !== undefined) return known;
    if (!spec.idempotentBySpec) throw outcomeUnknown(spec, 'an earlier attempt may have reached the provider, which shows no record of it');
  }
  noteAttempt({ sent: 'maybe' });
  try {
    return await spec.post();
  } catch (err) {
    if (!isProviderError(err)) throw err;
    if (!err.mayHaveTakenEffect) noteAttempt({ sent: 'no' });
    if (err.type !== 'InvalidResponse') throw err;
    activityLog('answer unreadable after the call may have taken effect: reconciling', spec.idempotencyKey);
    const known = await spec.recall();
    if (known !== undefined) return known;
    if (!spec.idempotentBySpec) throw outcomeUnknown(spec, 'its answer could not be read and the provider shows no record of it');
    // Idempotent by the spec: the next attempt asks again, then posts under the same key, whose
    // answer is the original one. Bounded by the flow's deadline, not by a count.
    throw ApplicationFailure.create({
      type: FailureType.InvalidResponse,
      message: `the answer to ${spec.endpoint} could not be read and the provider shows no outcome under key ${spec.idempotencyKey} yet: asking again under the same key`,
      details: [{ idempotencyKey: spec.idempotencyKey, endpoint: spec.endpoint, mayHaveTakenEffect: true }],
    });
  }
}

/** Recall through GET /operations/{key}: `reconcile` reads the record into an outcome, or undefined when it cannot. */
export function fromOperation<T>(
  provider: ProviderClient,
  idempotencyKey: string,
  reconcile: (earlier: OperationAnswer) => Promise<T | undefined> | T | undefined,
): () => Promise<T | undefined> {
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
    message: `${spec.endpoint} under key ${spec.idempotencyKey}: ${why}; it is not sent again. Reconcile under this key (GET /operations/${spec.idempotencyKey}) before trying again`,
    nonRetryable: true,
    details: [{ idempotencyKey: spec.idempotencyKey, endpoint: spec.endpoint, mayHaveTakenEffect: true, providerSaid }],
  });
}
