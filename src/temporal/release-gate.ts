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
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { PINNED_FLOWS } from '../shared/pinned-flows';

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
  /** How many are open (each checked, up to `limit`; beyond it, visibility's count of candidates). */
  open: number;
  /** The open ones, up to `limit`, oldest first. */
  flows: UnversionedFlow[];
}

/** The visibility query of the gate: running short flows of the task queue with no Worker Deployment version. */
export function releaseGateQuery(taskQueue: string): string {
  if (/['\\]/.test(taskQueue)) throw new Error(`task queue ${JSON.stringify(taskQueue)} cannot be quoted in a visibility query`);
  return `ExecutionStatus = 'Running' AND TemporalWorkerDeploymentVersion IS NULL AND TaskQueue = '${taskQueue}' AND WorkflowType IN (${PINNED_FLOWS.map((t) => `'${t}'`).join(', ')})`;
}

/** The gate of the short flows on `taskQueue` (the main queue: the namespace may hold other fleets' flows). */
export async function releaseGate(client: Client, { taskQueue, limit = 20 }: { taskQueue: string; limit?: number }): Promise<ReleaseGate> {
  const query = releaseGateQuery(taskQueue);
  const flows: UnversionedFlow[] = [];
  let checked = 0;
  let more = false;
  for await (const run of client.workflow.list({ query })) {
    if (checked >= limit) {
      more = true;
      break;
    }
    checked++;
    if (await ranATask(client, run)) flows.push({ workflowId: run.workflowId, runId: run.runId, type: run.type, startedAt: run.startTime.toISOString() });
  }
  // Past the limit, the rest are counted, not each checked: a gate that must list thousands is closed anyway.
  const open = more ? flows.length + (await client.workflow.count(query)).count - checked : flows.length;
  flows.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  return { passes: open === 0, open, flows };
}

/** A sentence naming the open flows (the CLI's and the worker's refusal). */
export function describeGate(gate: ReleaseGate): string {
  if (gate.passes) return 'release gate passes: no short flow that ran without a Worker Deployment version is open';
  const named = gate.flows.map((f) => `${f.type} ${f.workflowId}`).join(', ');
  return `release gate closed: ${gate.open} short flow(s) that ran without a Worker Deployment version are still open (${named}${gate.open > gate.flows.length ? ', …' : ''}); release 2 cannot replay them. Run release 1 until they end and \`deploy release-gate\` passes (CHANGELOG, "Upgrading to release 2")`;
}

async function ranATask(client: Client, run: WorkflowExecutionInfo): Promise<boolean> {
  const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
  return (history.events ?? []).some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
}
