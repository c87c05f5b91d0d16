/**
 * Attempts (shared/open-items.ts, docs/idempotency.md "Attempts and open items"): a call that may move
 * money is recorded as a `moneyAttempt` workflow under its item's ID before its first POST, so that no
 * way its owner can stop (terminated, cancelled, timed out, a card workflow stopped mid-update) leaves
 * the money without a record. Here: recording it, settling it with the provider's word, opening it as
 * an item, and reading what became of its owner.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { attemptLearnedSignal, attemptOpenedSignal, attemptSettledSignal, cardMovementsQuery, cardStateQuery } from '../shared/messages';
import { phaseOf } from '../shared/statuses';
import { ATTEMPT_WATCH_MS, MONEY_ATTEMPT_WORKFLOW_TYPE, openItemId, openItemMemo, type AttemptFacts, type AttemptSettlement, type MoneyAttempt, type OpenItem, type OpenItemOwner, type OpenItemVerdict } from '../shared/open-items';
import { mayHaveTakenEffectOf } from '../shared/outcome-unknown';
import { addressed } from '../shared/signal-origin';
import { FLOW_KIND } from '../shared/search-attributes';

/** Records the attempt unless its owner's attempt or item exists already (a retry, a re-scheduling after a 429). */
export async function beginAttempt(client: Client, taskQueue: string, attempt: MoneyAttempt): Promise<string> {
  const workflowId = openItemId(attempt.item.owner);
  try {
    await client.workflow.start(MONEY_ATTEMPT_WORKFLOW_TYPE, {
      taskQueue,
      workflowId,
      args: [attempt],
      // One record per owner, for ever: an attempt settled, or the item it became, is never begun again.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      // Its first look is due after a watch anyway: delayed, it costs no timer, and the word of a call that
      // ends within the delay (its signal, held by the server) settles it in its first task (issue 52: actions).
      startDelay: attempt.watchMs,
      typedSearchAttributes: [{ key: FLOW_KIND, value: MONEY_ATTEMPT_WORKFLOW_TYPE }],
      // What an operator reads of it should it be stopped by hand before it became its item (`open` lists it as ended).
      memo: openItemMemo(workflowId, attempt.item),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  return workflowId;
}

/**
 * Tells the owner's attempt (or the item it became) the provider's final word. Best effort: the money's
 * record is the flow's own; an attempt not told closes from its owner's result at its next look.
 * Returns whether it was told.
 */
export async function settleAttempt(client: Client, owner: OpenItemOwner, settlement: AttemptSettlement): Promise<boolean> {
  const workflowId = openItemId(owner);
  try {
    await client.workflow.getHandle(workflowId).signal(attemptSettledSignal, addressed(workflowId, settlement));
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Tells the owner's pending attempt what its call learned (the card it created), so the item it may become can ask about it. */
export async function learnAttempt(client: Client, owner: OpenItemOwner, facts: AttemptFacts): Promise<void> {
  const workflowId = openItemId(owner);
  await client.workflow
    .getHandle(workflowId)
    .signal(attemptLearnedSignal, addressed(workflowId, facts))
    .catch((err: unknown) => {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    });
}

/** An existing `open-item/<owner>` that is a pending attempt is opened as `item`; an item already open, or a closed record, stays as it is. */
export async function openPendingAttempt(client: Client, workflowId: string, item: OpenItem): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  const info = await handle.describe().catch((err: unknown) => {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  });
  if (info?.type !== MONEY_ATTEMPT_WORKFLOW_TYPE || info.status.name !== 'RUNNING') return;
  // Signal-with-start: a plain signal would wait out the attempt's start delay; this one runs it now. Running, it is only signalled.
  await client.workflow
    .signalWithStart(MONEY_ATTEMPT_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: info.taskQueue,
      args: [{ item, watchMs: ATTEMPT_WATCH_MS } satisfies MoneyAttempt],
      signal: attemptOpenedSignal,
      signalArgs: [addressed(workflowId, item)],
      // It closed in between (settled by the provider's word, or opened by its own watch): nothing is started again.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    })
    .catch((err: unknown) => {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    });
}

/** What became of an attempt's owner: still running, recorded its outcome itself, or stopped without one. */
export type OwnerState = { running: true } | { recorded: OpenItemVerdict; status: string } | { stopped: string };

export async function ownerState(client: Client, owner: OpenItemOwner): Promise<OwnerState> {
  const handle = client.workflow.getHandle(owner.workflowId, owner.runId);
  let described: Awaited<ReturnType<typeof handle.describe>>;
  try {
    described = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { stopped: 'NOT_FOUND' };
    throw err;
  }
  const status = described.status.name;
  // A flow that moved to a new build at a continue-as-new (a payout following its order, workflows/lib/roll-over.ts)
  // goes on in the chain's next run: that run's state is the owner's, not "stopped without a word".
  if (owner.updateId === undefined && status === 'CONTINUED_AS_NEW') return continuedOwnerState(client, owner, described.raw.workflowExecutionInfo?.firstRunId ?? undefined);
  if (owner.updateId !== undefined && owner.action === 'delete') return deleteState(client, owner.workflowId, status === 'RUNNING' ? handle : undefined, status);
  if (owner.updateId !== undefined) return updateState(client, owner.workflowId, owner.updateId, status === 'CONTINUED_AS_NEW' ? undefined : handle, status);
  if (status === 'RUNNING') return { running: true };
  if (status === 'COMPLETED') return { recorded: 'moved', status };
  // Failed: a failure that says nothing moved is the flow's record; one that may have moved opened the item itself, so here it stopped without it.
  if (status === 'FAILED') return (await failedWithoutEffect(handle)) ? { recorded: 'not-moved', status } : { stopped: status };
  return { stopped: status };
}

/** The latest run of the owner's workflow ID, when it continues the owner's chain (the same first run): its state, as the owner's. */
async function continuedOwnerState(client: Client, owner: OpenItemOwner, firstRunId: string | undefined): Promise<OwnerState> {
  const latest = await client.workflow.getHandle(owner.workflowId).describe();
  if (firstRunId === undefined || latest.raw.workflowExecutionInfo?.firstRunId !== firstRunId || latest.runId === owner.runId) return { stopped: 'CONTINUED_AS_NEW' };
  return ownerState(client, { ...owner, runId: latest.runId });
}

/**
 * A card workflow's money update, in the run it began in: running while that run runs and has not
 * remembered it. A run continues as new only once its updates finished, and carries what they
 * answered: the latest run's memory says. Any other stop (terminated, cancelled, failed) ended it without a word.
 */
async function updateState(client: Client, workflowId: string, updateId: string, run: ReturnType<Client['workflow']['getHandle']> | undefined, status: string): Promise<OwnerState> {
  if (status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW') return { stopped: status };
  const movements = await (run ?? client.workflow.getHandle(workflowId)).query(cardMovementsQuery).catch((err: unknown) => {
    // The latest run stopped too: nothing left to ask.
    if (run === undefined) return [];
    throw err;
  });
  const movement = movements.find((m) => m.updateId === updateId);
  if (!movement) return run ? { running: true } : { stopped: status };
  if ('result' in movement) return { recorded: 'moved', status };
  // An unsure failure opens its item from the update's handler: until then it is still under way.
  return mayHaveMoved(movement.failure) ? { running: true } : { recorded: 'not-moved', status };
}

/**
 * A card workflow's delete update, which no money movement record lists: its owner's own record is the
 * card workflow's view. A card it reads DELETING or DELETED (statuses.ts cardDeletion) says the balance went
 * back: moved. Otherwise the delete is under way while the run that took it runs (a delete that ended unsure
 * opens its item from its handler; one the provider answered settled its attempt); any other stop ended it
 * without a word. A card workflow completes only once its card is DELETED, and a run continues as new only
 * once its updates finished: the latest run's view says.
 */
async function deleteState(client: Client, workflowId: string, run: ReturnType<Client['workflow']['getHandle']> | undefined, status: string): Promise<OwnerState> {
  if (status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW' && status !== 'COMPLETED') return { stopped: status };
  const view = await (run ?? client.workflow.getHandle(workflowId)).query(cardStateQuery).catch((err: unknown) => {
    // The latest run stopped too: nothing left to ask.
    if (run === undefined) return undefined;
    throw err;
  });
  if (view?.status !== undefined && phaseOf('cardDeletion', view.status) === 'succeeded') return { recorded: 'moved', status: view.status };
  return run ? { running: true } : { stopped: status };
}

async function failedWithoutEffect(handle: ReturnType<Client['workflow']['getHandle']>): Promise<boolean> {
  const err = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
  return cause instanceof ApplicationFailure && !mayHaveMoved({ type: cause.type ?? undefined, details: cause.details ?? [] });
}

/**
 * The client's rule (shared/outcome-unknown.ts), so that an attempt and a caller never disagree: what the
 * failure's details say, else only a type that says nothing took effect moved nothing (a ServerError may have).
 */
function mayHaveMoved(failure: { type?: string; details?: readonly unknown[] } | undefined): boolean {
  if (!failure) return true;
  const said = (failure.details ?? []).map((d) => (d as { mayHaveTakenEffect?: unknown } | null)?.mayHaveTakenEffect).find((v) => typeof v === 'boolean');
  return mayHaveTakenEffectOf(failure.type ?? '', said);
}
