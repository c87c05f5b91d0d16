/**
 * Issue 51: the typed client answers `mayHaveTakenEffect: false` only when it is known that nothing
 * moved: a type that says the provider stated a terminal failed status or refused the request, or one
 * refused before anything was sent, or the flow's own details saying false. A flow that ended any
 * other way (a 5xx or timeout after its POST, a type the client does not know) may have moved money.
 * Pure: the failures are built as Temporal's client hands them over.
 */
import { ApplicationFailure, RetryState } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { toCardIssuingError, type CardIssuingError } from '../../src/client/errors';

const failed = (type: string, details: unknown[] = []) =>
  toCardIssuingError(new WorkflowFailedError('failed', ApplicationFailure.create({ type, message: `ended ${type}`, nonRetryable: true, details }), RetryState.NON_RETRYABLE_FAILURE), { workflowId: 'fund-card/k' }) as CardIssuingError;

test.each(['ServerError', 'Timeout', 'NetworkError', 'InvalidResponse', 'IdempotencyInProgress', 'RateLimited', 'CardProvisioningTimedOut', 'KycReviewTimedOut', 'SomethingNew', 'OutcomeUnknown', 'SubmissionOutcomeUnknown'])(
  'a flow that ended %s with nothing said: mayHaveTakenEffect true',
  (type) => {
    expect(failed(type).mayHaveTakenEffect).toBe(true);
  },
);

test.each([
  'ValidationFailed',
  'NotAllowed',
  'Unauthorized',
  'OperationFailed',
  'EsimRefunded',
  'CardProvisioningFailed',
  'IdempotencyKeyTerminal',
  'IdempotencyConflict',
  'InsufficientFunds',
  'PlanUnavailable',
  'InvalidState',
  'NotFound',
])('a flow that ended %s: mayHaveTakenEffect false', (type) => {
  expect(failed(type).mayHaveTakenEffect).toBe(false);
});

test("the flow's own word stands: true on any type, false where it says nothing was sent; an unknown outcome is always true", () => {
  expect(failed('InsufficientFunds', [{ mayHaveTakenEffect: true }]).mayHaveTakenEffect).toBe(true);
  expect(failed('PayoutNotApproved', [{ mayHaveTakenEffect: false }]).mayHaveTakenEffect).toBe(false);
  expect(failed('OutcomeUnknown', [{ mayHaveTakenEffect: false }]).mayHaveTakenEffect).toBe(true);
});
