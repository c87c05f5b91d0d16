/**
 * A failure of ours as a caller in another namespace reads it, in any SDK: an ApplicationFailure of
 * the client's type (non-retryable), whose first detail holds `mayHaveTakenEffect` and the ids to
 * ask again under. A synchronous operation sends it as the cause of its OperationError: the innermost
 * failure of the caller's chain. (The onboarding relay sends less: relay-activities.ts.)
 */
import { ApplicationFailure } from '@temporalio/common';
import type { CardIssuingError } from '../client';

export function typedFailure(err: CardIssuingError): ApplicationFailure {
  const detail = {
    mayHaveTakenEffect: err.mayHaveTakenEffect,
    ...(err.workflowId === undefined ? {} : { workflowId: err.workflowId }),
    ...(err.updateId === undefined ? {} : { updateId: err.updateId }),
    ...(err.idempotencyKey === undefined ? {} : { idempotencyKey: err.idempotencyKey }),
    details: [...err.details],
  };
  return ApplicationFailure.create({ type: err.type, message: err.message, nonRetryable: true, details: [detail] });
}
