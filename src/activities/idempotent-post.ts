/**
 * A POST under a durable idempotency key (funding, withdrawal, eSIM purchase and recharge)
 * that a retry never repeats blindly: from the second attempt on, GET /operations/{key} says
 * first what became of the earlier attempt, and only when the provider has no record of the
 * key (or nothing to show yet) is the POST sent again, under the same key.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import { isProviderError } from '../provider/errors';
import type { Operation } from '../provider/schemas';
import { FailureType } from '../shared/failures';
import { currentAttempt } from './provider-call';

export interface ReconcilingPost<T> {
  idempotencyKey: string;
  /** The outcome an earlier attempt left under the key; undefined when it has nothing to show, so the POST is sent. */
  reconcile: (earlier: Operation) => Promise<T | undefined> | T | undefined;
  post: () => Promise<T>;
}

export async function postReconcilingFirst<T>(provider: ProviderClient, spec: ReconcilingPost<T>): Promise<T> {
  if (currentAttempt() > 1) {
    const earlier = await readOperation(provider, spec.idempotencyKey);
    const known = earlier && (await spec.reconcile(earlier));
    if (known !== undefined) return known;
  }
  return spec.post();
}

/** The provider's record of a key; undefined when it has none. */
export async function readOperation(provider: ProviderClient, idempotencyKey: string): Promise<Operation | undefined> {
  try {
    return await provider.getOperation(idempotencyKey);
  } catch (err) {
    if (isProviderError(err, 'NotFound')) return undefined;
    throw err;
  }
}

/** An operation found under our key that is not ours (another type, card, amount or order). */
export function idempotencyConflict(idempotencyKey: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.IdempotencyConflict,
    message: `idempotency key ${idempotencyKey} was used for a different request`,
    nonRetryable: true,
  });
}
