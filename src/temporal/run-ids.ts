/**
 * Visibility rows as ids (and type and start), read raw: the SDK's list decodes each row's memo
 * through our codec, so one flow whose memo another key sealed (another service's flow in a shared
 * namespace, a key retired since, a payload in clear that our codec refuses) would fail the whole
 * listing: a rollout, or a worker's start at the release gate. They need no more than this.
 */
import type { Client } from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time';

export interface RunId {
  workflowId: string;
  runId: string;
}

export interface RunRow extends RunId {
  type: string;
  startTime: Date;
}

export async function* runIds(client: Client, query: string): AsyncIterable<RunRow> {
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query, nextPageToken });
    for (const row of page.executions ?? []) {
      const { workflowId, runId } = row.execution ?? {};
      if (workflowId && runId) yield { workflowId, runId, type: row.type?.name ?? '', startTime: optionalTsToDate(row.startTime) ?? new Date(0) };
    }
    nextPageToken = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
  } while (nextPageToken);
}

/** The attempt of a run's pending workflow task (0: none pending), from its raw description (no memo decoded). */
export async function pendingTaskAttempt(client: Client, run: RunId): Promise<number> {
  const described = await client.workflowService.describeWorkflowExecution({ namespace: client.options.namespace, execution: run });
  return described.pendingWorkflowTask?.attempt ?? 0;
}
