/**
 * Release 3's gate (docs/versioning.md, "Release 3"): the build after the transition build may drop
 * the markers of the long-lived types it pins (shared/pinned-flows.ts ROLLING_FLOWS) only when no
 * running run of them can still replay on it a history that took a marker. A pinned run never does:
 * it stays on its build and reaches a new one only by a continue-as-new, which starts a fresh
 * history. A run that is not pinned (one of release 2 that has not run a task on the transition
 * build yet, or one on an unversioned worker) would auto-upgrade onto the markerless build and fail
 * its replay there. `deploy marker-gate` lists those (exit 1 `MarkerGateClosed`).
 */
import type { Client } from '@temporalio/client';
import { ROLLING_FLOWS } from '../shared/pinned-flows';
import { literal } from '../shared/reconciliation';
import { runIds } from './run-ids';

export interface UnpinnedRun {
  workflowId: string;
  runId: string;
  type: string;
  startedAt: string;
}

export interface MarkerGate {
  /** True when no running run of a long-lived pinned type is unpinned: their markers may go. */
  passes: boolean;
  /** How many the query found, up to MAX_LISTED (more: `unchecked`). */
  open: number;
  /** The oldest of them, up to `limit`. */
  runs: UnpinnedRun[];
  unchecked?: boolean;
}

const MAX_LISTED = 1000;

/** Running runs of the pinned long-lived types on the deployment's workflow queues that are not pinned. */
export function markerGateQuery(taskQueues: string[]): string {
  return `ExecutionStatus = 'Running' AND TaskQueue IN (${taskQueues.map(literal).join(', ')}) AND WorkflowType IN (${ROLLING_FLOWS.map(literal).join(', ')}) AND (TemporalWorkflowVersioningBehavior IS NULL OR TemporalWorkflowVersioningBehavior != 'Pinned')`;
}

export async function markerGate(client: Client, { taskQueues, limit = 20 }: { taskQueues: string[]; limit?: number }): Promise<MarkerGate> {
  const runs: UnpinnedRun[] = [];
  let unchecked = false;
  for await (const run of runIds(client, markerGateQuery(taskQueues))) {
    if (runs.length >= MAX_LISTED) {
      unchecked = true;
      break;
    }
    runs.push({ workflowId: run.workflowId, runId: run.runId, type: run.type, startedAt: run.startTime.toISOString() });
  }
  runs.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  return { passes: runs.length === 0 && !unchecked, open: runs.length, runs: runs.slice(0, limit), ...(unchecked ? { unchecked } : {}) };
}

/** A sentence naming the unpinned runs (the CLI's answer). */
export function describeMarkerGate(gate: MarkerGate): string {
  if (gate.passes) return "marker gate passes: every running run of the long-lived pinned types is pinned; a build may drop their markers";
  const named = gate.runs.map((r) => `${r.type} ${r.workflowId}`).join(', ');
  const count = gate.unchecked ? `more than ${MAX_LISTED}` : String(gate.open);
  return `marker gate closed: ${count} running run(s) of the long-lived pinned types are not pinned (${named}${gate.open > gate.runs.length || gate.unchecked ? ', …' : ''}); a build without their markers could not replay them. Keep the markers until each has run a workflow task on a build of release 3 (a promotion's rollOver, or its next event, gives it one) or ended`;
}
