/**
 * Visibility rows as ids only, read raw: the SDK's list decodes each row's memo through our codec,
 * so one flow whose memo another key sealed (another service's flow in a shared namespace, a key
 * retired since) would fail the whole listing. The deployment moves need no more than the ids.
 */
import type { Client } from '@temporalio/client';

export interface RunId {
  workflowId: string;
  runId: string;
}

export async function* runIds(client: Client, query: string): AsyncIterable<RunId> {
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query, nextPageToken });
    for (const row of page.executions ?? []) {
      const { workflowId, runId } = row.execution ?? {};
      if (workflowId && runId) yield { workflowId, runId };
    }
    nextPageToken = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
  } while (nextPageToken);
}

/** The attempt of a run's pending workflow task (0: none pending), from its raw description (no memo decoded). */
export async function pendingTaskAttempt(client: Client, run: RunId): Promise<number> {
  const described = await client.workflowService.describeWorkflowExecution({ namespace: client.options.namespace, execution: run });
  return described.pendingWorkflowTask?.attempt ?? 0;
}
