/**
 * The reports of reconciliation runs, read back from Temporal: a report is its run's result, so
 * the last completed run of a reconciliation on a task queue holds its last report. Read by the
 * CLI (`drift`) and by refresh-bins (the BIN list the last run reported is its next run's baseline).
 */
import type { Client } from '@temporalio/client';
import { RECONCILIATIONS, literal, type DriftReport, type ReconcileKind } from '../shared/reconciliation';

export interface LatestRun {
  workflowId: string;
  report: DriftReport;
}

/** The last completed run of the reconciliation on the task queue (scheduled or run by hand), under either of its type names. */
export async function latestReport(client: Client, taskQueue: string, kind: ReconcileKind): Promise<LatestRun | undefined> {
  const { workflowType, formerWorkflowType } = RECONCILIATIONS[kind];
  // Under either name: the last report may be of a run made before the rename.
  const query = `WorkflowType IN (${literal(workflowType)}, ${literal(formerWorkflowType)}) AND TaskQueue = ${literal(taskQueue)} AND ExecutionStatus = 'Completed'`;
  // Visibility lists closed runs newest first: the first one listed is the last report.
  for await (const run of client.workflow.list({ query, pageSize: 1 })) {
    const report = (await client.workflow.getHandle(run.workflowId, run.runId).result()) as DriftReport;
    return { workflowId: run.workflowId, report };
  }
  return undefined;
}
