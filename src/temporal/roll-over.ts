/**
 * Releases 3 and 4 (docs/versioning.md): once a build is current, the long-lived runs pinned to the
 * deployment's other builds are asked to look at their new target (the `rollOver` signal,
 * shared/messages.ts). The server tells a pinned run its target changed only inside a workflow task
 * and never schedules one for it, so an idle card would otherwise stay on the old build, and keep
 * its workers running, until its next event. Each run that sees the change continues as new onto
 * the current build (workflows/lib/entity-loop.ts). One batch operation of the server signals them
 * all: a deployment may hold a run per card.
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { rollOverSignal } from '../shared/messages';
import { ROLLING_FLOWS } from '../shared/pinned-flows';
import { literal } from '../shared/reconciliation';
import type { DeploymentTarget } from './deployments';

const { BatchOperationState } = temporal.api.enums.v1;

export interface RollOverJob {
  jobId: string;
  query: string;
}

export interface RollOverProgress {
  done: boolean;
  /** Runs signalled, and runs the query matched (0 until the server has counted them). */
  signalled: number;
  total: number;
  failed: number;
}

/** The running long-lived runs of the deployment pinned to a build other than `buildId`. */
export function rollOverQuery(deploymentName: string, buildId: string): string {
  return `ExecutionStatus = 'Running' AND TemporalWorkflowVersioningBehavior = 'Pinned' AND TemporalWorkerDeployment = ${literal(deploymentName)} AND TemporalWorkerDeploymentVersion != ${literal(`${deploymentName}:${buildId}`)} AND WorkflowType IN (${ROLLING_FLOWS.map(literal).join(', ')})`;
}

/** Starts the batch that signals them; resolves once the server accepted it (it runs on in the server). */
export async function askToRollOver(t: DeploymentTarget, buildId: string): Promise<RollOverJob> {
  const query = rollOverQuery(t.deploymentName, buildId);
  const jobId = `roll-over-${t.deploymentName}-${buildId}-${randomUUID()}`;
  const identity = t.identity ?? `card-issuing-cli@${process.pid}`;
  await t.connection.workflowService.startBatchOperation({
    namespace: t.namespace,
    jobId,
    visibilityQuery: query,
    reason: `build ${buildId} is current: pinned long-lived runs move to it at a continue-as-new`,
    signalOperation: { signal: rollOverSignal.name, identity },
  });
  return { jobId, query };
}

export async function rollOverProgress(t: DeploymentTarget, jobId: string): Promise<RollOverProgress> {
  const d = await t.connection.workflowService.describeBatchOperation({ namespace: t.namespace, jobId });
  return {
    done: d.state === BatchOperationState.BATCH_OPERATION_STATE_COMPLETED || d.state === BatchOperationState.BATCH_OPERATION_STATE_FAILED,
    signalled: Number(d.completeOperationCount ?? 0),
    total: Number(d.totalOperationCount ?? 0),
    failed: Number(d.failureOperationCount ?? 0),
  };
}

/**
 * After a promotion: asks, and says so. Never throws: the promotion has happened, and a run that was
 * not asked still moves at its next event (a webhook, an update, its idle read).
 */
export async function rollOverAfterPromotion(t: DeploymentTarget, buildId: string, progress: (line: string) => void): Promise<RollOverJob | undefined> {
  try {
    const job = await askToRollOver(t, buildId);
    progress(`asked the long-lived runs pinned to other builds to move to build ${buildId} at a continue-as-new (batch ${job.jobId})`);
    return job;
  } catch (err) {
    progress(`could not ask the long-lived runs pinned to other builds to move to build ${buildId} (${(err as Error).message}): each moves at its next event instead`);
    return undefined;
  }
}
