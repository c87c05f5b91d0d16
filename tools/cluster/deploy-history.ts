/**
 * Where a flow ran, read from its history: the build of each completed workflow task
 * (WorkflowTaskCompleted's deploymentVersion, what the worker declared), the builds whose workers
 * failed one (by the pid in the failing worker's identity: a failed task records no version), and
 * for a card update the tasks that accepted and completed it. And replay: histories against a
 * build's bundle, as a worker of that build would replay them.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { workerDataConverter } from '../../src/codec/payload-codec';
import type { Config } from '../../src/config';
import type { Tracked } from './deploy-flows';

type History = temporal.api.history.v1.IHistory;
type Event = temporal.api.history.v1.IHistoryEvent;
const { VersioningBehavior } = temporal.api.enums.v1;

export interface Placement {
  /** The build of each completed workflow task, in order ('-' for an unversioned worker). */
  builds: string[];
  /** Each completed task's declared behaviour (PINNED, AUTO_UPGRADE). */
  behaviours: string[];
  /** The builds whose workers failed a workflow task of it. */
  failedOn: string[];
  /** Whether a timer was started before the first activity was scheduled (v2's change to the money flows). */
  timerFirst: boolean;
}

export const first = (p: Placement) => p.builds[0] ?? '-';
export const last = (p: Placement) => p.builds[p.builds.length - 1] ?? '-';

/** The build a worker's identity (`pid@host`, the SDK's default) belongs to. */
export type BuildOfPid = (pid: number) => string | undefined;

export async function fetchHistory(client: Client, workflowId: string, runId?: string): Promise<History> {
  return client.workflow.getHandle(workflowId, runId).fetchHistory();
}

/** Every run of a workflow ID's continue-as-new chain, oldest first: from the latest run back through each run's predecessor. */
export async function chainOf(client: Client, workflowId: string): Promise<History[]> {
  const runs = [await fetchHistory(client, workflowId)];
  for (let before = startedOf(runs[0])?.continuedExecutionRunId; before; before = startedOf(runs[0])?.continuedExecutionRunId) {
    runs.unshift(await fetchHistory(client, workflowId, before));
  }
  return runs;
}

const startedOf = (history: History) => history.events?.[0]?.workflowExecutionStartedEventAttributes;

/**
 * Whether a run ended by continuing as new, and whether the server had told it, in that last workflow
 * task, that its target build changed (the WorkflowTaskStarted event records it; the continue-as-new
 * event does not record the new run's initial behaviour).
 */
export function continuedAsNew(history: History): { targetChanged: boolean } | undefined {
  const events = history.events ?? [];
  if (!events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes) return undefined;
  const started = events.filter((e) => e.workflowTaskStartedEventAttributes).pop()?.workflowTaskStartedEventAttributes;
  return { targetChanged: started?.targetWorkerDeploymentVersionChanged === true };
}

/** Whether a run's history holds the update (by ID, or by name when its ID is not known). */
export function holdsUpdate(history: History, update: NonNullable<Tracked['update']>): boolean {
  const events = history.events ?? [];
  const tasks = events.flatMap((e, i) => (e.workflowTaskCompletedEventAttributes ? [i] : []));
  return updateTasks(events, tasks, update).length > 0;
}

/** A flow's placement; a card update's is that of the tasks that accepted and completed it. */
export function placementOf(history: History, buildOfPid: BuildOfPid, update?: Tracked['update']): Placement {
  const events = history.events ?? [];
  const tasks = events.flatMap((e, i) => (e.workflowTaskCompletedEventAttributes ? [i] : []));
  const buildAt = (i: number) => buildOf(events[i]);
  const behaviourAt = (i: number) => VersioningBehavior[events[i].workflowTaskCompletedEventAttributes?.versioningBehavior ?? 0].replace('VERSIONING_BEHAVIOR_', '');
  const chosen = update ? updateTasks(events, tasks, update) : tasks;
  return {
    builds: chosen.map(buildAt),
    behaviours: chosen.map(behaviourAt),
    failedOn: [...new Set(events.flatMap((e) => (e.workflowTaskFailedEventAttributes ? [pidBuild(e.workflowTaskFailedEventAttributes.identity, buildOfPid)] : [])))],
    timerFirst: timerBeforeActivity(events),
  };
}

/** The last completed task at or before each event of the update (accepted, completed). */
function updateTasks(events: Event[], tasks: number[], update: NonNullable<Tracked['update']>): number[] {
  const names = new Map<string, string>();
  for (const e of events) {
    const req = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    if (req?.meta?.updateId) names.set(req.meta.updateId, req.input?.name ?? '');
  }
  const ours = (id: string | null | undefined) => !!id && (update.id ? id === update.id : (update.names ?? []).includes(names.get(id) ?? ''));
  const at = events.flatMap((e, i) => (ours(e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId) || ours(e.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId) ? [i] : []));
  if (at.length === 0) return [];
  const before = (i: number) => tasks.filter((t) => t <= i).pop();
  return [before(at[0]), before(at[at.length - 1])].filter((t): t is number => t !== undefined);
}

function buildOf(e: Event): string {
  const a = e.workflowTaskCompletedEventAttributes;
  return a?.deploymentVersion?.buildId || a?.workerVersion?.buildId || '-';
}

function pidBuild(identity: string | null | undefined, buildOfPid: BuildOfPid): string {
  const pid = Number((identity ?? '').split('@')[0]);
  return buildOfPid(pid) ?? `? (${identity})`;
}

function timerBeforeActivity(events: Event[]): boolean {
  const timer = events.findIndex((e) => e.timerStartedEventAttributes);
  const activity = events.findIndex((e) => e.activityTaskScheduledEventAttributes);
  return timer >= 0 && (activity < 0 || timer < activity);
}

let runtimeInstalled = false;

/** Replays `histories` against a build's bundle; resolves each one's error (undefined: replayed). */
export async function replay(bundlePath: string, config: Pick<Config, 'codec' | 'signalMac'>, histories: Array<{ workflowId: string; history: History }>): Promise<Array<{ workflowId: string; error?: Error }>> {
  if (!runtimeInstalled) {
    // Quiet: a replay that fails (the nondeterminism deploy.ts expects on purpose) is reported by the check, not by the core's WARN.
    Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
    runtimeInstalled = true;
  }
  const results: Array<{ workflowId: string; error?: Error }> = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: { codePath: bundlePath }, dataConverter: workerDataConverter(config) }, histories)) {
    results.push({ workflowId: r.workflowId, error: r.error });
  }
  return results;
}
