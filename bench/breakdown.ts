/**
 * Where a flow's time goes (P3's breakdown, docs/performance.md): read off the histories of a sample
 * of each side's flows after the timed turns, so it costs the timing nothing. Per flow: events,
 * workflow tasks, activities by type (scheduled → started → completed), markers, search-attribute
 * upserts, signals to other workflows; the workflows those signals reached (the card workflow) are
 * read too, their work divided by the flows that caused it.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { actionsOf, type ActionCount } from './actions';
import { round } from './lib';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Averages per flow over `flows` histories. */
export interface FlowBreakdown {
  flows: number;
  events: number;
  workflowTasks: number;
  /** Workflow task scheduled → started (queue wait) and started → completed (the worker's work), ms. */
  workflowTaskWaitMs: number;
  workflowTaskRunMs: number;
  activities: number;
  /** Per activity type: how many per flow, scheduled → started and started → completed, ms (averages). */
  activityTypes: Record<string, { perFlow: number; waitMs: number; runMs: number }>;
  markers: number;
  upserts: number;
  signalsSent: number;
  /** Signals that found no workflow to take them (SignalExternalWorkflowExecutionFailed). */
  signalsFailed: number;
  /** Signals and updates this workflow took (the card workflow: told of each movement). */
  signalsReceived: number;
  updates: number;
  /** Start → close of the run, ms (saturated: mostly queueing). */
  durationMs: number;
  /** Engine actions per flow, as Temporal Cloud bills them (bench/actions.ts). */
  actions: ActionCount;
}

const ms = (e: HistoryEvent | undefined): number => {
  const t = e?.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : Number.NaN;
};

/** The breakdown of these runs' histories (each ID's latest run). */
export async function breakdownOf(client: Client, workflowIds: string[]): Promise<FlowBreakdown> {
  const histories = await Promise.all(workflowIds.map(async (id) => (await client.workflow.getHandle(id).fetchHistory()).events ?? []));
  return summarize(histories, histories.length);
}

/**
 * The work a set of histories did, per flow of `flows` (the card workflow's runs: every signal it
 * took and every read it made, divided by the fundCard flows that told it). Only events between
 * `from` and `to` count when given.
 */
export function summarize(histories: HistoryEvent[][], flows: number, from = -Infinity, to = Infinity): FlowBreakdown {
  const n = Math.max(1, flows);
  let events = 0;
  let wfts = 0;
  let wftWait = 0;
  let wftRun = 0;
  let markers = 0;
  let upserts = 0;
  let signalsSent = 0;
  let signalsFailed = 0;
  let signalsReceived = 0;
  let updates = 0;
  let duration = 0;
  const types = new Map<string, { count: number; wait: number; run: number; timed: number }>();
  for (const history of histories) {
    const byId = new Map<number, HistoryEvent>();
    const inWindow = history.filter((e) => ms(e) >= from && ms(e) <= to);
    for (const e of history) byId.set(Number(e.eventId), e);
    events += inWindow.length;
    duration += ms(history.at(-1)) - ms(history[0]);
    for (const e of inWindow) {
      if (e.workflowTaskCompletedEventAttributes) {
        wfts++;
        const started = byId.get(Number(e.workflowTaskCompletedEventAttributes.startedEventId));
        const scheduled = byId.get(Number(e.workflowTaskCompletedEventAttributes.scheduledEventId));
        wftWait += ms(started) - ms(scheduled);
        wftRun += ms(e) - ms(started);
      }
      if (e.markerRecordedEventAttributes) markers++;
      if (e.upsertWorkflowSearchAttributesEventAttributes) upserts++;
      if (e.signalExternalWorkflowExecutionInitiatedEventAttributes) signalsSent++;
      if (e.signalExternalWorkflowExecutionFailedEventAttributes) signalsFailed++;
      if (e.workflowExecutionSignaledEventAttributes) signalsReceived++;
      if (e.workflowExecutionUpdateAcceptedEventAttributes) updates++;
      const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
      if (e.activityTaskScheduledEventAttributes) {
        const name = e.activityTaskScheduledEventAttributes.activityType?.name ?? '?';
        const t = types.get(name) ?? { count: 0, wait: 0, run: 0, timed: 0 };
        t.count++;
        types.set(name, t);
      }
      if (done) {
        const scheduled = byId.get(Number(done.scheduledEventId));
        const started = byId.get(Number(done.startedEventId));
        const name = scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
        const t = types.get(name) ?? { count: 0, wait: 0, run: 0, timed: 0 };
        t.timed++;
        t.wait += ms(started) - ms(scheduled);
        t.run += ms(e) - ms(started);
        types.set(name, t);
      }
    }
  }
  const activityTypes: FlowBreakdown['activityTypes'] = {};
  for (const [name, t] of types) activityTypes[name] = { perFlow: round(t.count / n, 2), waitMs: round(t.wait / Math.max(1, t.timed), 1), runMs: round(t.run / Math.max(1, t.timed), 1) };
  const activities = [...types.values()].reduce((s, t) => s + t.count, 0);
  return {
    flows,
    events: round(events / n, 2),
    workflowTasks: round(wfts / n, 2),
    workflowTaskWaitMs: round(wftWait / Math.max(1, wfts), 1),
    workflowTaskRunMs: round(wftRun / Math.max(1, wfts), 1),
    activities: round(activities / n, 2),
    activityTypes,
    markers: round(markers / n, 2),
    upserts: round(upserts / n, 2),
    signalsSent: round(signalsSent / n, 2),
    signalsFailed: round(signalsFailed / n, 2),
    signalsReceived: round(signalsReceived / n, 2),
    updates: round(updates / n, 2),
    durationMs: round(duration / Math.max(1, histories.length), 1),
    actions: actionsOf(histories, flows, from, to),
  };
}

/** Every run of a workflow ID (the card workflow continues as new), each run's history. */
export async function historiesOfEveryRun(client: Client, workflowId: string): Promise<HistoryEvent[][]> {
  const runs: string[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) runs.push(run.runId);
  return Promise.all(runs.map(async (runId) => (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? []));
}

/** One line per side for the log: where a flow's time goes. */
export function describeBreakdown(name: string, b: FlowBreakdown): string {
  const acts = Object.entries(b.activityTypes)
    .map(([type, a]) => `${type} ${a.perFlow}× wait ${a.waitMs} run ${a.runMs} ms`)
    .join('; ');
  return `${name}: ${b.events} events, ${b.workflowTasks} workflow tasks (wait ${b.workflowTaskWaitMs}, run ${b.workflowTaskRunMs} ms), ${b.activities} activities [${acts || '-'}], ${b.markers} markers, ${b.upserts} upserts, ${b.signalsSent} signals sent (${b.signalsFailed} failed), ${b.signalsReceived} signals and ${b.updates} updates taken`;
}
