/**
 * Settlements of flows that ended OutcomeUnknown, read back from Temporal (issue 29). A flow that
 * could not learn whether the provider moved its money marks itself `ProviderStatus =
 * OUTCOME_UNKNOWN` as it fails; an operator settles it with `starter settle`, which runs the
 * `settleOutcome` workflow under `settlement/<workflowId>`: its completed run is the settlement
 * (what the provider said under every key the flow could have used). Nothing else records one, so
 * reconciliation and the unsettled gauge ask here, and the record lives as long as the flow's own
 * history (the namespace's retention).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { literal } from '../shared/reconciliation';
import { OUTCOME_UNKNOWN_STATUS, SETTLE_WORKFLOW_TYPE, settledWorkflowId, settlementWorkflowId } from '../shared/settlement';

// Defined in shared/settlement.ts, where workflow code (which marks itself with them) may import them.
export { OUTCOME_UNKNOWN_STATUS, SETTLE_WORKFLOW_TYPE, settlementWorkflowId, type Settlement, type SettlementVerdict } from '../shared/settlement';

/** The flows (by workflow ID) settled on `taskQueue`: the completed settleOutcome runs. */
export async function settledWorkflowIds(client: Client, taskQueue: string): Promise<Set<string>> {
  const query = `WorkflowType = ${literal(SETTLE_WORKFLOW_TYPE)} AND TaskQueue = ${literal(taskQueue)} AND ExecutionStatus = 'Completed'`;
  const settled = new Set<string>();
  for await (const run of client.workflow.list({ query })) settled.add(settledWorkflowId(run.workflowId));
  return settled;
}

/** The flows on `taskQueue` that ended OutcomeUnknown and are not settled, once per workflow ID (its newest such run). */
export async function unsettledOutcomes(client: Client, taskQueue: string): Promise<Array<{ workflowId: string; runId: string; type: string }>> {
  const settled = await settledWorkflowIds(client, taskQueue);
  const query = `ProviderStatus = ${literal(OUTCOME_UNKNOWN_STATUS)} AND TaskQueue = ${literal(taskQueue)} AND ExecutionStatus = 'Failed'`;
  const unsettled = new Map<string, { workflowId: string; runId: string; type: string }>();
  for await (const run of client.workflow.list({ query })) {
    if (!settled.has(run.workflowId) && !unsettled.has(run.workflowId)) unsettled.set(run.workflowId, { workflowId: run.workflowId, runId: run.runId, type: run.type });
  }
  return [...unsettled.values()];
}

/** True when flow `workflowId` has a settlement (a completed settleOutcome run under its settlement ID). */
export async function isSettled(client: Client, workflowId: string): Promise<boolean> {
  try {
    const run = await client.workflow.getHandle(settlementWorkflowId(workflowId)).describe();
    return run.status.name === 'COMPLETED';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
