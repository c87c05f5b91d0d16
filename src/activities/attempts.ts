/**
 * Attempts from the activities' side (temporal/attempts.ts): the POST's activity records its attempt
 * before it sends and tells it the provider's final word; the attempt's own watch asks what became of
 * its owner.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { mainQueueOfActivity } from '../shared/task-queues';
import { ATTEMPT_WATCH_MS, attemptItem, withCadenceFloor, type AttemptFacts, type AttemptOf, type AttemptSettlement, type OpenItemOwner, type OpenItemVerdict } from '../shared/open-items';
export type { AttemptFacts } from '../shared/open-items';
import { phaseOf, type StatusResource } from '../shared/statuses';
import { beginAttempt, learnAttempt, ownerState, settleAttempt, type OwnerState } from '../temporal/attempts';

/** What recording an attempt needs of the worker: its Temporal client and the items' ask floor (OPEN_ITEM_MIN_ASK_MS). */
export interface AttemptDeps {
  temporal: Client;
  openItemMinAskMs: number;
}

/** Records the attempt before the first POST: from here on, no stop of its owner leaves the call without a record. */
export async function recordAttempt({ temporal, openItemMinAskMs }: AttemptDeps, attempt: AttemptOf, facts: AttemptFacts): Promise<void> {
  const item = attemptItem({ owner: attempt.owner, flowKind: attempt.flowKind, openedAt: Date.now(), ...(attempt.cadence ? { cadence: attempt.cadence } : {}) }, facts);
  await beginAttempt(temporal, mainQueueOfActivity(Context.current().info.taskQueue), { item: withCadenceFloor(item, openItemMinAskMs), watchMs: attempt.watchMs ?? ATTEMPT_WATCH_MS });
}

/**
 * A standalone flow's call (issueCard, an eSIM order): its attempt belongs to the activity's own
 * workflow run, and closes from that run's result when it ends (a flow's completion is its record).
 */
export async function recordAttemptOfRun(deps: AttemptDeps, facts: AttemptFacts): Promise<void> {
  // Only a flow of ours has an owner an attempt can watch (an activity run on its own, as a test does, has none).
  const owner = runOwner();
  if (!owner) return;
  // Its flow's timings are not the activity's to read: it watches at the items' pace when that is the faster (a test stack's 1 s).
  const watchMs = Math.min(ATTEMPT_WATCH_MS, deps.openItemMinAskMs);
  // Its owner stopped without a word: the provider is asked from the floor on, doubling (not after the items' default 5 minutes).
  await recordAttempt(deps, { owner, flowKind: Context.current().info.workflowType ?? 'unknown', watchMs, cadence: { firstAskMs: deps.openItemMinAskMs } }, facts);
}

const RUN_OWNED_FLOWS = ['issueCard', 'purchaseEsim', 'rechargeEsim', 'sendPayout', 'onboardCardholder'];

/**
 * The provider's final word on the call (an operation's COMPLETED or FAILED, a payout's terminal
 * status), told to its attempt; nothing for a status that is not final.
 */
export function tellAttempt(temporal: Client, owner: OpenItemOwner | undefined, resource: StatusResource, status: string): Promise<void> {
  const phase = phaseOf(resource, status);
  const verdict: OpenItemVerdict | undefined = phase === 'succeeded' ? 'moved' : phase === 'failed' || phase === 'cancelled' ? 'not-moved' : undefined;
  return verdict ? settleAttemptWith(temporal, owner, { verdict, providerSaid: status.slice(0, 64) }) : Promise.resolve();
}

/** The provider's final word as the activity heard it, told to the owner's attempt (a DELETE answered 2xx: the card is deleted). */
export function settleAttemptOf(temporal: Client, owner: OpenItemOwner | undefined, settlement: AttemptSettlement): Promise<void> {
  return settleAttemptWith(temporal, owner, settlement);
}

/** tellAttempt for the activity's own run's attempt (recordAttemptOfRun). */
export function tellAttemptOfRun(temporal: Client, resource: StatusResource, status: string): Promise<void> {
  return tellAttempt(temporal, runOwner(), resource, status);
}

/** The provider's answer itself settles the run's attempt: a submission it accepted (its fee charged), or one it refused outright. */
export function settleAttemptOfRun(temporal: Client, settlement: AttemptSettlement): Promise<void> {
  return settleAttemptWith(temporal, runOwner(), settlement);
}

/**
 * Sent, not awaited: the answer does not wait for the attempt's bookkeeping (an RPC on every movement's
 * path: issue 52). It never fails the activity: the money's record is the flow's, and an attempt not
 * told (the signal lost with the worker) closes from its owner's result at its first look.
 */
function settleAttemptWith(temporal: Client, owner: OpenItemOwner | undefined, settlement: AttemptSettlement): Promise<void> {
  if (!owner) return Promise.resolve();
  const { log } = Context.current();
  void settleAttempt(temporal, owner, settlement).catch((err: unknown) => log.warn("attempt not told of the provider's word; it closes from its owner's result", { error: (err as Error).message }));
  return Promise.resolve();
}

/** What the run's call learned from the provider's answer (issueCard: its card), told to its attempt. Best effort, as settling is. */
export async function tellAttemptLearned(temporal: Client, facts: AttemptFacts): Promise<void> {
  const owner = runOwner();
  if (!owner) return;
  try {
    await learnAttempt(temporal, owner, facts);
  } catch (err) {
    Context.current().log.warn('attempt not told what its call learned; its item may need an operator', { error: (err as Error).message });
  }
}

/** The activity's own flow run, when it is one that records attempts. */
function runOwner(): OpenItemOwner | undefined {
  const { workflowExecution, workflowType } = Context.current().info;
  if (!workflowExecution?.runId || !RUN_OWNED_FLOWS.includes(workflowType ?? '')) return undefined;
  return { workflowId: workflowExecution.workflowId, runId: workflowExecution.runId };
}

export function createAttemptActivities({ temporal }: { temporal: Client }) {
  return {
    /** What became of an attempt's owner (temporal/attempts.ts ownerState). */
    async attemptOwnerState({ owner }: { owner: OpenItemOwner }): Promise<OwnerState> {
      return ownerState(temporal, owner);
    },
  };
}
