/**
 * Reconciliation from a client: run some now and wait for their reports (`reconcile`), and the
 * last report of each (`drift`). Reports are the workflows' results, so nothing else stores them.
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { RECONCILIATIONS, type DriftReport, type ReconcileInput, type ReconcileKind } from '../shared/reconciliation';
import { latestReport } from '../temporal/reconciliation-reports';

export interface ReconcileTarget {
  client: Client;
  taskQueue: string;
}

/** Starts each reconciliation now (beside its schedule, under an ID of its own) and resolves their reports. */
export async function reconcileNow(target: ReconcileTarget, kinds: readonly ReconcileKind[], input: ReconcileInput = {}, onStart?: (workflowId: string) => void): Promise<DriftReport[]> {
  const handles = await startReconciliations(target, kinds, input, onStart);
  return Promise.all(handles.map(async (handle) => (await handle.result()) as DriftReport));
}

/** Starts each reconciliation now, under an ID of its own (`<scheduleId>/manual/<uuid>`); their reports are their results. */
export function startReconciliations(target: ReconcileTarget, kinds: readonly ReconcileKind[], input: ReconcileInput = {}, onStart?: (workflowId: string) => void): Promise<WorkflowHandle[]> {
  return Promise.all(
    kinds.map(async (kind) => {
      const def = RECONCILIATIONS[kind];
      const handle = await target.client.workflow.start(def.workflowType, {
        taskQueue: target.taskQueue,
        workflowId: `${def.scheduleId}/manual/${randomUUID()}`,
        args: [input],
      });
      onStart?.(handle.workflowId);
      return handle;
    }),
  );
}

export type LatestReport = { kind: ReconcileKind; workflowId: string; report: DriftReport } | { kind: ReconcileKind; workflowId?: undefined; report?: undefined };

/** The last completed report of each reconciliation on the task queue (scheduled or run by hand). */
export async function latestReports(target: ReconcileTarget, kinds: readonly ReconcileKind[]): Promise<LatestReport[]> {
  return Promise.all(
    kinds.map(async (kind): Promise<LatestReport> => {
      const latest = await latestReport(target.client, target.taskQueue, kind);
      return latest ? { kind, ...latest } : { kind };
    }),
  );
}
