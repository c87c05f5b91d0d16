/**
 * How many of each reconciliation's latest runs failed one after another (issue 41, case 3): a run
 * that fails still counts as a run for ReconciliationNotRun, so a reconciliation failing every hour
 * paged nobody. Read from visibility, the same for every worker (the alert takes the max), so it
 * needs no worker to have seen the failures itself.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { RECONCILE_KINDS, RECONCILIATIONS, type DriftReport, type ReconcileKind } from '../shared/reconciliation';

/** Closed runs that did not do their work: failed, timed out, terminated or cancelled (a continue-as-new is progress). */
const FAILED = new Set(['FAILED', 'TIMED_OUT', 'TERMINATED', 'CANCELLED']);
/** The latest closed runs looked at: enough to see three failures in a row, and a page of visibility. */
export const RUNS_LOOKED_AT = 10;

/** Per reconciliation (its schedule's name): how many of its latest closed runs on `taskQueue` failed before the last that did not. */
export async function consecutiveFailures(client: Client, taskQueue: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const kind of RECONCILE_KINDS) {
    const { scheduleId, workflowType, formerWorkflowType } = RECONCILIATIONS[kind];
    const query = `(WorkflowType = '${workflowType}' OR WorkflowType = '${formerWorkflowType}') AND TaskQueue = '${taskQueue}' AND ExecutionStatus != 'Running'`;
    const runs: WorkflowExecutionInfo[] = [];
    for await (const run of client.workflow.list({ query, pageSize: RUNS_LOOKED_AT })) {
      runs.push(run);
      if (runs.length >= RUNS_LOOKED_AT) break;
    }
    // Latest first, whatever order visibility answers in.
    runs.sort((a, b) => (b.closeTime?.getTime() ?? 0) - (a.closeTime?.getTime() ?? 0));
    const firstDone = runs.findIndex((run) => !FAILED.has(run.status.name));
    counts.set(scheduleId, firstDone < 0 ? runs.length : firstDone);
  }
  return counts;
}

/**
 * The start (epoch ms) of the latest run of the reconciliation on `taskQueue` that completed and was
 * not told how far back to look (a scheduled run, or one run by hand without `since`): everything that
 * closed before it started was read by it or by the runs it read from, so the next run reads from there
 * (reconcile-money's look-back, issue 51). Failed runs do not count: their successor covers their span.
 * Undefined when none of the latest RUNS_LOOKED_AT completed runs qualifies.
 */
export async function lastRunStart(client: Client, taskQueue: string, kind: ReconcileKind): Promise<number | undefined> {
  const { workflowType, formerWorkflowType } = RECONCILIATIONS[kind];
  const query = `(WorkflowType = '${workflowType}' OR WorkflowType = '${formerWorkflowType}') AND TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Completed'`;
  let latest: number | undefined;
  let looked = 0;
  for await (const run of client.workflow.list({ query, pageSize: RUNS_LOOKED_AT })) {
    const report = (await client.workflow.getHandle(run.workflowId, run.runId).result()) as (DriftReport & { lookBack?: { from?: string } }) | undefined;
    const startedAt = Date.parse(report?.startedAt ?? '');
    // A run told `since` read what it was told, not from its predecessor's start: it carries no chain.
    if (report?.lookBack?.from !== 'input' && Number.isFinite(startedAt)) latest = Math.max(latest ?? startedAt, startedAt);
    if (++looked >= RUNS_LOOKED_AT) break;
  }
  return latest;
}
