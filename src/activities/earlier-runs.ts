/**
 * What earlier runs of a workflow ID recorded in their memo. A flow whose provider call takes
 * no idempotency key (the KYC form) records the call's outcome there, so that a repeated
 * start with the same workflow ID finds it and does not call again.
 */
import type { Client } from '@temporalio/client';

export function createEarlierRunActivities({ temporal }: { temporal: Client }) {
  return {
    /**
     * The memo values under `key` of the other runs of `workflowId`, newest first. Reads
     * visibility, which may lag a moment behind a run that has just closed. An ID that cannot
     * be quoted in a visibility query has no earlier runs as far as this lookup can tell.
     */
    async earlierRunMemos({ workflowId, runId, key }: { workflowId: string; runId: string; key: string }): Promise<unknown[]> {
      if (/["\\]/.test(workflowId)) return [];
      const found: Array<{ startTime: number; value: unknown }> = [];
      for await (const run of temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
        const value = run.memo?.[key];
        if (run.runId !== runId && value !== undefined) found.push({ startTime: run.startTime.getTime(), value });
      }
      return found.sort((a, b) => b.startTime - a.startTime).map((f) => f.value);
    },
  };
}
