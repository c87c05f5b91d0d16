/**
 * Release 2's gate (CHANGELOG, "Upgrading to release 2"): release 2 dropped the patch markers of the
 * pinned short flows (shared/pinned-flows.ts), so it cannot replay a short flow that ran on a worker
 * without a Worker Deployment version (an unversioned fleet, before Worker Deployments): such a flow
 * is routed to whichever build is current, and its history holds markers release 2 no longer asks
 * for. The gate lists the open ones; `deploy release-gate` reports them and a versioned worker of
 * release 2 refuses to start while any is open (fleet/workers.ts).
 *
 * A flow counts once a workflow task completed on an unversioned worker: one started a moment ago
 * whose first task has not completed yet carries no version either, but has recorded nothing a
 * build could fail to replay.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { PINNED_FLOWS } from '../shared/pinned-flows';
import { runIds, type RunId } from './run-ids';

const { EventType } = temporal.api.enums.v1;

export interface UnversionedFlow {
  workflowId: string;
  runId: string;
  type: string;
  startedAt: string;
}

export interface ReleaseGate {
  /** True when no unversioned short flow is open: release 2 may run. */
  passes: boolean;
  /** How many are open (each confirmed by its history). */
  open: number;
  /** The open ones, up to `limit`, oldest first. */
  flows: UnversionedFlow[];
  /** More candidates than the gate checks at once: not all were looked at, so the gate is closed. */
  unchecked?: boolean;
}

/** Candidates the gate checks at most: past them it stays closed rather than guess. */
const MAX_CHECKED = 1000;

/**
 * The visibility query of the gate: running short flows of the task queue that completed a workflow
 * task (BuildIds is set then) and have no Worker Deployment version. A flow whose first task has not
 * completed (just started, or queued while no worker polls) has neither and is not a candidate.
 */
export function releaseGateQuery(taskQueue: string): string {
  if (/['\\]/.test(taskQueue)) throw new Error(`task queue ${JSON.stringify(taskQueue)} cannot be quoted in a visibility query`);
  return `ExecutionStatus = 'Running' AND TemporalWorkerDeploymentVersion IS NULL AND BuildIds IS NOT NULL AND TaskQueue = '${taskQueue}' AND WorkflowType IN (${PINNED_FLOWS.map((t) => `'${t}'`).join(', ')})`;
}

/** The gate of the short flows on `taskQueue` (the main queue: the namespace may hold other fleets' flows). */
export async function releaseGate(client: Client, { taskQueue, limit = 20 }: { taskQueue: string; limit?: number }): Promise<ReleaseGate> {
  const flows: UnversionedFlow[] = [];
  let checked = 0;
  let unchecked = false;
  for await (const run of runIds(client, releaseGateQuery(taskQueue))) {
    if (checked >= MAX_CHECKED) {
      unchecked = true;
      break;
    }
    checked++;
    // Visibility may lag behind a flow's first versioned task: its history says how each task ran.
    if (await ranUnversioned(client, run)) flows.push({ workflowId: run.workflowId, runId: run.runId, type: run.type, startedAt: run.startTime.toISOString() });
  }
  flows.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  return { passes: flows.length === 0 && !unchecked, open: flows.length, flows: flows.slice(0, limit), ...(unchecked ? { unchecked } : {}) };
}

/** A sentence naming the open flows (the CLI's and the worker's refusal). */
export function describeGate(gate: ReleaseGate): string {
  if (gate.passes) return 'release gate passes: no short flow that ran without a Worker Deployment version is open';
  const named = gate.flows.map((f) => `${f.type} ${f.workflowId}`).join(', ');
  const count = gate.unchecked ? `at least ${gate.open} (more than ${MAX_CHECKED} candidates, not all checked)` : String(gate.open);
  return `release gate closed: ${count} short flow(s) that ran without a Worker Deployment version are still open (${named}${gate.open > gate.flows.length || gate.unchecked ? ', …' : ''}); release 2 cannot replay them. Run release 1 until they end and \`deploy release-gate\` passes (CHANGELOG, "Upgrading to release 2")`;
}

/** True when a workflow task of the run completed on a worker with no Worker Deployment (an unversioned worker reports no deployment name). */
async function ranUnversioned(client: Client, run: RunId): Promise<boolean> {
  const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
  return (history.events ?? []).some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && !e.workflowTaskCompletedEventAttributes?.deploymentVersion?.deploymentName);
}
