/**
 * The reconciliation schedules (CONTRACTS §9), created or updated by one idempotent call that
 * the CLI (`schedules apply`) and the worker (SCHEDULES=on) share; listed, paused and resumed
 * here too. Each schedule starts its reconciliation on the main task queue, with overlapping
 * runs skipped: a run still going when the next is due makes the next one wait for its turn.
 */
import { Client, Connection, ScheduleAlreadyRunning, ScheduleOverlapPolicy, type ScheduleOptions } from '@temporalio/client';
import type { Config } from '../config';
import { createDataConverter } from '../codec/payload-codec';
import { connectionOptions } from './connection';
import { RECONCILE_KINDS, RECONCILIATIONS, parseDuration, type ReconcileKind } from '../shared/reconciliation';

export interface ScheduleTarget {
  client: Client;
  /** The main task queue the reconciliations run on (and check). */
  taskQueue: string;
  /** Tests only: keeps their schedules apart from the real ones on a shared server. */
  idSuffix?: string;
}

export type ApplyOutcome = 'created' | 'updated' | 'unchanged';

export interface ScheduleSummary {
  name: string;
  scheduleId: string;
  workflowType: string;
  every: string;
  paused: boolean;
  nextRunAt?: string;
  lastRunAt?: string;
  lastWorkflowId?: string;
}

export function scheduleIdOf(kind: ReconcileKind, target: Pick<ScheduleTarget, 'idSuffix'>): string {
  return `${RECONCILIATIONS[kind].scheduleId}${target.idSuffix ?? ''}`;
}

/** A schedule name as an operator writes it (`reconcile-money`), or undefined. */
export function kindOfScheduleName(name: string): ReconcileKind | undefined {
  return RECONCILE_KINDS.find((k) => RECONCILIATIONS[k].scheduleId === name);
}

function everyMs(kind: ReconcileKind): number {
  return parseDuration(RECONCILIATIONS[kind].every) ?? 3_600_000;
}

function optionsOf(kind: ReconcileKind, target: ScheduleTarget): ScheduleOptions {
  const def = RECONCILIATIONS[kind];
  const scheduleId = scheduleIdOf(kind, target);
  return {
    scheduleId,
    spec: { intervals: [{ every: everyMs(kind) }] },
    action: { type: 'startWorkflow', workflowType: def.workflowType, taskQueue: target.taskQueue, workflowId: scheduleId, args: [{}] },
    // SKIP: never two runs of one reconciliation at once (they would read the same pages twice).
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour', pauseOnFailure: false },
  };
}

/** Creates each schedule, or updates it to the current definition (its paused state is kept). Safe to run any number of times, from any number of workers. */
export async function applySchedules(target: ScheduleTarget): Promise<Record<string, ApplyOutcome>> {
  const outcomes: Record<string, ApplyOutcome> = {};
  for (const kind of RECONCILE_KINDS) {
    const options = optionsOf(kind, target);
    try {
      await target.client.schedule.create(options);
      outcomes[options.scheduleId] = 'created';
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      outcomes[options.scheduleId] = await updateIfChanged(target, kind, options);
    }
  }
  return outcomes;
}

async function updateIfChanged(target: ScheduleTarget, kind: ReconcileKind, options: ScheduleOptions): Promise<ApplyOutcome> {
  const handle = target.client.schedule.getHandle(options.scheduleId);
  const current = await handle.describe();
  const action = current.action.type === 'startWorkflow' ? current.action : undefined;
  const every = current.spec.intervals?.[0]?.every;
  const same =
    action?.workflowType === RECONCILIATIONS[kind].workflowType &&
    action.taskQueue === target.taskQueue &&
    (typeof every === 'number' ? every : parseDuration(String(every))) === everyMs(kind) &&
    current.policies.overlap === ScheduleOverlapPolicy.SKIP;
  if (same) return 'unchanged';
  await handle.update((previous) => ({ ...previous, spec: options.spec, action: options.action, policies: { ...previous.policies, ...options.policies } }));
  return 'updated';
}

export async function listSchedules(target: ScheduleTarget): Promise<ScheduleSummary[]> {
  return Promise.all(
    RECONCILE_KINDS.map(async (kind) => {
      const def = RECONCILIATIONS[kind];
      const scheduleId = scheduleIdOf(kind, target);
      const d = await target.client.schedule.getHandle(scheduleId).describe();
      const last = d.info.recentActions.at(-1);
      const summary: ScheduleSummary = { name: def.scheduleId, scheduleId, workflowType: def.workflowType, every: def.every, paused: d.state.paused };
      if (d.info.nextActionTimes[0]) summary.nextRunAt = d.info.nextActionTimes[0].toISOString();
      if (last) {
        summary.lastRunAt = last.takenAt.toISOString();
        summary.lastWorkflowId = last.action.workflow.workflowId;
      }
      return summary;
    }),
  );
}

export async function pauseSchedule(target: ScheduleTarget, kind: ReconcileKind, note = 'paused from the CLI'): Promise<void> {
  await target.client.schedule.getHandle(scheduleIdOf(kind, target)).pause(note);
}

export async function resumeSchedule(target: ScheduleTarget, kind: ReconcileKind, note = 'resumed from the CLI'): Promise<void> {
  await target.client.schedule.getHandle(scheduleIdOf(kind, target)).unpause(note);
}

/** Runs a schedule's action now (tests and operators), and answers the workflow it started. */
export async function triggerSchedule(target: ScheduleTarget, kind: ReconcileKind): Promise<string> {
  const handle = target.client.schedule.getHandle(scheduleIdOf(kind, target));
  const before = (await handle.describe()).info.numActionsTaken;
  await handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const d = await handle.describe();
    if (d.info.numActionsTaken > before) return d.info.recentActions.at(-1)!.action.workflow.workflowId;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`schedule ${scheduleIdOf(kind, target)} took no action within 30 s of its trigger`);
}

/** The worker at start with SCHEDULES=on: applies the schedules on its own connection, then closes it. */
export async function applySchedulesOnce(config: Pick<Config, 'temporal' | 'codec'>): Promise<Record<string, ApplyOutcome>> {
  const connection = await Connection.connect(connectionOptions(config.temporal));
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec) });
    return await applySchedules({ client, taskQueue: config.temporal.taskQueue });
  } finally {
    await connection.close();
  }
}
