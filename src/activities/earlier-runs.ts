/**
 * What earlier runs of a workflow ID did. Two uses:
 * - a flow whose provider call takes no idempotency key (the KYC form) records the call's outcome
 *   in its memo, so that a repeated start with the same workflow ID finds it and does not call again;
 *   whether a run scheduled the call at all comes from its history (a run lost mid-call recorded nothing);
 * - a money flow whose key is derived from its workflow ID asks, before its first POST, whether an
 *   earlier run of that ID exists; only then does it look for what that run may have moved under
 *   any key an earlier version could have derived (docs/idempotency.md, "A restart"); issueCard
 *   also with a caller's key, among the runs started with that key (their start input).
 * Both read visibility, which may lag a moment behind a run that has just closed.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { status } from '@grpc/grpc-js';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { derivesSha256Keys } from '../shared/ids';

/** An earlier run of the workflow ID an activity runs for. */
export interface EarlierRun {
  runId: string;
  startedAt: number;
  /** The card an earlier issueCard run created and recorded (search attribute CardId). */
  cardId?: string;
  /**
   * The run derived its keys with SHA-256 as far as visibility tells (shared/ids.ts derivesSha256Keys:
   * a marker in its TemporalChangeVersion, or a Worker Deployment version). Only a fallback: the
   * key its POST was scheduled with (`earlierRunPost`) is the run's own word.
   */
  sha256Keys: boolean;
}

export function createEarlierRunActivities({ temporal }: { temporal: Client }) {
  return {
    /**
     * The memo values under `key` of the other runs of `workflowId`, newest first. An ID that
     * cannot be quoted in a visibility query has no earlier runs as far as this lookup can tell.
     */
    async earlierRunMemos({ workflowId, runId, key }: { workflowId: string; runId: string; key: string }): Promise<unknown[]> {
      const found: Array<{ startTime: number; value: unknown }> = [];
      for (const run of await otherRuns(temporal, workflowId, runId)) {
        const value = run.memo?.[key];
        if (value !== undefined) found.push({ startTime: run.startTime.getTime(), value });
      }
      return found.sort((a, b) => b.startTime - a.startTime).map((f) => f.value);
    },

    /**
     * Per other run of `workflowId`, newest first: its memo value under `key`, and whether it
     * scheduled any of `activityTypes` (its history). A run that scheduled a call without a key
     * and recorded nothing may have made it: a run lost mid-call leaves no memo.
     */
    async earlierRunRecords({ workflowId, runId, key, activityTypes }: { workflowId: string; runId: string; key: string; activityTypes: string[] }): Promise<EarlierRunRecord[]> {
      const runs = (await otherRuns(temporal, workflowId, runId)).sort((a, b) => b.startTime.getTime() - a.startTime.getTime());
      return Promise.all(
        runs.map(async (run) => ({
          ...(run.memo?.[key] === undefined ? {} : { value: run.memo[key] }),
          scheduled: await scheduledIn(temporal, { workflowId, runId: run.runId }, activityTypes),
        })),
      );
    },
  };
}

/** What one earlier run recorded in its memo, and whether it scheduled the calls asked about. */
export interface EarlierRunRecord {
  value?: unknown;
  scheduled: boolean;
}

/** The other runs of the workflow ID the running activity belongs to, oldest first (none outside an activity). */
export async function earlierRunsOfThisWorkflow(temporal: Client): Promise<EarlierRun[]> {
  const run = activityInfo()?.workflowExecution;
  if (!run) return [];
  // Nearly every run is its ID's first: a count (no rows to read and decode) says so; only then the list.
  if (!(await anyOtherRun(temporal, run.workflowId, run.runId))) return [];
  const runs = await otherRuns(temporal, run.workflowId, run.runId);
  return runs.map(toEarlierRun).sort((a, b) => a.startedAt - b.startedAt);
}

/**
 * The first `activityType` an earlier run scheduled (undefined: none), with the idempotency key its
 * input carried, decoded through our codec: the key that run posted under, whatever built it (FNV,
 * SHA-256, a release with or without markers); the caller tells a derived key from a caller's
 * (another request's) by the keys the workflow ID derives. No key when the input cannot be read (a
 * payload key since deleted): the caller falls back on what visibility tells (`sha256Keys`).
 */
export async function earlierRunPost(temporal: Client, run: EarlierRun, activityType: string): Promise<{ idempotencyKey?: string } | undefined> {
  const history = await temporal.workflow.getHandle(activityInfo()!.workflowExecution!.workflowId, run.runId).fetchHistory();
  const scheduled = (history.events ?? []).find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activityType)?.activityTaskScheduledEventAttributes;
  if (!scheduled) return undefined;
  const input = await decodeFromPayloadsAtIndex<{ idempotencyKey?: unknown } | undefined>(temporal.workflow.options.loadedDataConverter, 0, scheduled.input?.payloads).catch(() => undefined);
  return typeof input?.idempotencyKey === 'string' ? { idempotencyKey: input.idempotencyKey } : {};
}

/**
 * earlierRunPost for a key derived from the workflow ID (`derived`: every key it derives): a run whose
 * POST carried another key, a caller's, made another request, and counts as one that posted nothing.
 */
export async function earlierDerivedPost(temporal: Client, run: EarlierRun, activityType: string, derived: readonly string[]): Promise<{ idempotencyKey?: string } | undefined> {
  const post = await earlierRunPost(temporal, run, activityType);
  return post?.idempotencyKey !== undefined && !derived.includes(post.idempotencyKey) ? undefined : post;
}

async function scheduledIn(temporal: Client, run: { workflowId: string; runId: string }, activityTypes: string[]): Promise<boolean> {
  const history = await temporal.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
  return (history.events ?? []).some((e) => activityTypes.includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''));
}

/** The input an earlier run of this workflow ID was started with (decoded through our codec); undefined when it has none. */
export async function earlierRunInput<T>(temporal: Client, run: EarlierRun): Promise<T | undefined> {
  const workflowId = activityInfo()!.workflowExecution!.workflowId;
  // The first event alone (a page of one): the run's history may be long.
  const page = await temporal.workflowService.getWorkflowExecutionHistory({
    namespace: temporal.options.namespace,
    execution: { workflowId, runId: run.runId },
    maximumPageSize: 1,
  });
  const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  return decodeFromPayloadsAtIndex<T | undefined>(temporal.workflow.options.loadedDataConverter, 0, started?.input?.payloads);
}

/** True when an earlier run of this workflow ID scheduled the activity `activityType`. */
export async function anEarlierRunScheduled(temporal: Client, activityType: string): Promise<boolean> {
  const workflowId = activityInfo()!.workflowExecution!.workflowId;
  for (const run of await earlierRunsOfThisWorkflow(temporal)) if (await scheduledIn(temporal, { workflowId, runId: run.runId }, [activityType])) return true;
  return false;
}

/**
 * False when visibility shows no run of `workflowId` but `runId`: the same question as `otherRuns`, asked
 * of the same store (so with the same lag), as a count. True when it cannot tell: the list decides.
 */
async function anyOtherRun(temporal: Client, workflowId: string, runId: string): Promise<boolean> {
  if (/["\\]/.test(workflowId) || /["\\]/.test(runId)) return true;
  try {
    return (await temporal.workflow.count(`WorkflowId = "${workflowId}" AND RunId != "${runId}"`)).count > 0;
  } catch {
    return true;
  }
}

async function otherRuns(temporal: Client, workflowId: string, runId: string): Promise<WorkflowExecutionInfo[]> {
  if (/["\\]/.test(workflowId)) return [];
  const runs: WorkflowExecutionInfo[] = [];
  try {
    for await (const run of temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` })) if (run.runId !== runId) runs.push(run);
  } catch (err) {
    // A server without visibility queries (Temporal's Java test server): no earlier run can be seen. Every
    // real server answers them; a failure of any other kind is retried as the activity's.
    if ((err as { code?: number }).code !== status.UNIMPLEMENTED && (err as { cause?: { code?: number } }).cause?.code !== status.UNIMPLEMENTED) throw err;
    Context.current().log.warn('visibility queries unsupported by this Temporal server: earlier runs of a workflow ID cannot be seen', { workflowId });
  }
  return runs;
}

function toEarlierRun(run: WorkflowExecutionInfo): EarlierRun {
  const attributes = run.searchAttributes ?? {};
  const cardId = (attributes.CardId as unknown[] | undefined)?.[0];
  const versions = (attributes.TemporalChangeVersion as unknown[] | undefined) ?? [];
  const deploymentVersion = (attributes.TemporalWorkerDeploymentVersion as unknown[] | undefined)?.[0];
  return {
    runId: run.runId,
    startedAt: run.startTime.getTime(),
    ...(typeof cardId === 'string' ? { cardId } : {}),
    sha256Keys: derivesSha256Keys(versions, typeof deploymentVersion === 'string' && deploymentVersion !== ''),
  };
}

function activityInfo() {
  try {
    return Context.current().info;
  } catch {
    return undefined; // outside an activity (the operator CLI)
  }
}
