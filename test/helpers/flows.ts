/** Shared steps of workflow tests: issue a card to act on, and read a workflow's (or the typed client's) failure. */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { CardView } from '../../src/shared/types';
import { isCardIssuingError, type CardIssuingError } from '../../src/client';
import { fixtureBins } from './provider';
import { FAST_TIMINGS, uniqueId, type Stack } from './stack';

/** Issues a card through the real issueCard workflow; `issuedBy` is that workflow's ID. */
export async function issueTestCard(stack: Stack, initialAmount = 10_000, extra: Record<string, unknown> = {}): Promise<CardView & { issuedBy: string }> {
  const { plain } = await fixtureBins(stack);
  const workflowId = uniqueId('issue-card');
  const card = await stack.client.workflow.execute('issueCard', {
    taskQueue: stack.taskQueue,
    workflowId,
    args: [{ cardBinId: plain.cardBinId, initialAmount, firstName: 'Test', lastName: 'Holder', timings: FAST_TIMINGS, ...extra }],
  });
  return { ...card, issuedBy: workflowId };
}

/** The ApplicationFailure a workflow ended with (asserting the failure chain). */
export async function workflowFailure(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof WorkflowFailedError)) throw new Error(`expected the workflow to fail, got ${String(err)}`);
  if (!(err.cause instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure cause, got ${String(err.cause)}`);
  return err.cause;
}

/** The CardIssuingError a typed client's call failed with (asserting it failed so). */
export async function clientFailure(p: Promise<unknown>): Promise<CardIssuingError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isCardIssuingError(err)) throw new Error(`expected a CardIssuingError, got ${String(err)}`);
  return err;
}
