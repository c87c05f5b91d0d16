/**
 * Waiting for the outside world: a flow subscribes to the entity workflow that receives the
 * provider's webhooks, hands it a poll schedule (the entity polls when no webhook comes in
 * time, entity-watch.ts), and waits for a final status (shared/statuses.ts says which are).
 * Data flows one way: provider → entity workflow → flow. A status the table does not know is
 * recorded (log and the ProviderStatus search attribute) and waited past, until the deadline.
 */
import { ApplicationFailure, condition, log, metricMeter, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { PROVIDER_STATUS } from '../../shared/search-attributes';
import { isFinal, isUnknownStatus } from '../../shared/statuses';
import { entityStateSignal } from '../../shared/messages';
import type { EntityState, WaitTimings, WatchPlan } from '../../shared/types';
import type { AwaitedKind, Outcome } from './entity-reads';
import { unmeteredActivities } from './provider';
import { trustedSignal } from './trusted-signal';
import { targetBuildChanged, targetTakesThisRelease, wakeOnRollOver } from './roll-over';

export type { Outcome };

export const DEFAULT_TIMINGS: Required<WaitTimings> = {
  webhookWaitMs: 30_000,
  pollInitialIntervalMs: 2_000,
  pollMaxIntervalMs: 60_000,
  deadlineMs: 24 * 60 * 60 * 1000,
};

export interface AwaitOutcomeOptions {
  kind: AwaitedKind;
  entityId: string;
  timings?: WaitTimings;
  /** The flow did not create the entity (trackPayout): a 404 means it does not exist, not that the provider lags. */
  notCreatedByUs?: boolean;
  /** When the wait ends (epoch ms), carried by a run that continued as new; by default `timings.deadlineMs` from now. */
  deadlineAt?: number;
  /**
   * Continues the flow as new onto a changed target build (lib/roll-over.ts), handed the wait's
   * deadline: a days-long wait moves to a new build instead of holding the old one's workers.
   */
  rollOver?: (deadlineAt: number) => Promise<never>;
}

/** Resolves with the first final status, or undefined when the deadline passed; fails with the entity's poll failure. */
export async function awaitOutcome({ kind, entityId, timings, notCreatedByUs, deadlineAt: carriedDeadline, rollOver }: AwaitOutcomeOptions): Promise<Outcome | undefined> {
  const t = { ...DEFAULT_TIMINGS, ...timings };
  const deadlineAt = carriedDeadline ?? Date.now() + t.deadlineMs;
  // The operator's signal, before the deadline: a log line, the ProviderStatus search attribute and
  // a counter (metrics leave no trace in history, so emitting one changes no replay).
  const recordUnknown = (status: string) => recordUnknownStatus(kind, entityId, status);
  let latest: EntityState | undefined;
  let shown: string | undefined;
  setHandler(entityStateSignal, trustedSignal('entityState', (state: EntityState) => {
    if (state.kind !== kind || state.entityId !== entityId) return;
    latest = state;
    if (isUnknownStatus(kind, state.status) && state.status !== shown) recordUnknown((shown = state.status!));
  }));
  const subscriberWorkflowId = workflowInfo().workflowId;

  await unmeteredActivities.subscribeToEntity({ kind, entityId, subscriberWorkflowId, watch: { ...watchPlan(t, deadlineAt), ...(notCreatedByUs ? {} : { notFoundIsLag: true }) } });
  const settled = () => isFinal(kind, latest?.status) || latest?.watchFailure !== undefined;
  if (rollOver) wakeOnRollOver();
  // A target of an earlier release (a rollback across releases) is declined: the run then ends on its build.
  let declined = false;
  const moving = () => rollOver !== undefined && !declined && targetBuildChanged();
  for (;;) {
    if (!(await condition(() => settled() || moving(), Math.max(1, deadlineAt - Date.now())))) return undefined;
    if (settled()) break;
    if (await targetTakesThisRelease()) return rollOver!(deadlineAt);
    log.warn('the target build is of an earlier release: this run stays on its build until it ends', { kind, entityId });
    declined = true;
  }
  const failure = latest!.watchFailure;
  if (failure && !isFinal(kind, latest!.status)) throw ApplicationFailure.create({ ...failure, nonRetryable: true });
  return { status: latest!.status!, data: latest!.data ?? {}, source: latest!.source === 'poll' ? 'poll' : 'webhook' };
}

/** Exported by the worker's SDK metrics (README, metrics): flows waiting on a provider status we do not know. */
/**
 * The operator's signal that a flow waits on a status we do not know, before its deadline: a log
 * line, the ProviderStatus search attribute and a counter (metrics leave no trace in history).
 */
export function recordUnknownStatus(kind: string, entityId: string, status: string): void {
  log.warn('provider status not in our vocabulary: treated as not final until the deadline', { kind, entityId, status });
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: status }]);
  // The SDK adds the workflowType, taskQueue and namespace labels itself.
  unknownStatusCounter().add(1, { kind });
}

export const UNKNOWN_STATUS_METRIC = 'provider_status_unknown';
function unknownStatusCounter() {
  return metricMeter.createCounter(UNKNOWN_STATUS_METRIC, 'statuses', 'Provider statuses a waiting flow met that are not in our vocabulary (not final until its deadline)');
}

function watchPlan(t: Required<WaitTimings>, deadlineAt: number): WatchPlan {
  const now = Date.now();
  return {
    pollFrom: Math.min(now + t.webhookWaitMs, deadlineAt),
    deadlineAt,
    pollInitialIntervalMs: t.pollInitialIntervalMs,
    pollMaxIntervalMs: t.pollMaxIntervalMs,
  };
}
