/**
 * A POST under a durable idempotency key (funding, withdrawal, eSIM purchase and recharge,
 * payouts) that a retry never repeats blindly: from the second attempt on, the provider says
 * first what became of the earlier attempt (GET /operations/{key}, or the payout's lookup),
 * and only when it has no record (or nothing to show yet) is the POST sent again, under the
 * same key.
 *
 * An answer we cannot read after a POST that took effect (InvalidResponse) is reconciled the
 * same way, at once; when even that says nothing, the failure carries the key, so an operator
 * can find the money at the provider.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import { isProviderError } from '../provider/errors';
import type { OperationAnswer } from '../provider/answers';
import { FailureType } from '../shared/failures';
import { currentAttempt } from './provider-call';

export interface ReconcilingPost<T> {
  idempotencyKey: string;
  /** The outcome an earlier attempt left; undefined when the provider has nothing to show, so the POST is sent. */
  recall: () => Promise<T | undefined>;
  post: () => Promise<T>;
}

export async function postReconcilingFirst<T>(spec: ReconcilingPost<T>): Promise<T> {
  if (currentAttempt() > 1) {
    activityLog('reconciling an earlier attempt before sending again', spec.idempotencyKey);
    const known = await spec.recall();
    if (known !== undefined) return known;
  }
  try {
    return await spec.post();
  } catch (err) {
    if (!isProviderError(err, 'InvalidResponse')) throw err;
    activityLog('answer unreadable after the call may have taken effect: reconciling', spec.idempotencyKey);
    const known = await spec.recall();
    if (known !== undefined) return known;
    throw unreadableAnswer(spec.idempotencyKey, err.endpoint);
  }
}

/** Recall through GET /operations/{key}: `reconcile` reads the record into an outcome, or undefined to POST again. */
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
 * something else. A field it did not show contradicts nothing (the spec shows only `status`).
 */
export function contradicts(shown: Record<string, unknown>, ours: Record<string, unknown>): boolean {
  return Object.entries(ours).some(([field, value]) => shown[field] !== undefined && shown[field] !== value);
}

/** An operation found under our key that is not ours (another type, card, amount or order). */
export function idempotencyConflict(idempotencyKey: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.IdempotencyConflict,
    message: `idempotency key ${idempotencyKey} was used for a different request`,
    nonRetryable: true,
    details: [{ idempotencyKey }],
  });
}

/** The POST took effect but neither its answer nor GET /operations/{key} can be read: stop, and say where to look. */
function unreadableAnswer(idempotencyKey: string, endpoint: string | undefined): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.InvalidResponse,
    message: `the provider's answer to ${endpoint ?? 'the call'} could not be read and GET /operations/${idempotencyKey} has no usable record; the call may have taken effect: reconcile under this key before trying again`,
    nonRetryable: true,
    details: [{ idempotencyKey, endpoint, mayHaveTakenEffect: true }],
  });
}
