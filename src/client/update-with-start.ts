/**
 * Update-with-Start that survives the server's transient refusals.
 *
 * Temporal answers an Update-with-Start FAILED_PRECONDITION "Update-with-Start could not be
 * executed" with a status per operation when the update lost a race it can win on a second try:
 * the workflow was continuing-as-new or closing when the update was admitted ("workflow
 * is closing"; the server retries that once itself and then hands it to the client), or another
 * start took the workflow ID between the server's check and its start (UNAVAILABLE). The SDK
 * retries neither, so a card funding sent while the card workflow rolls over would fail although
 * nothing happened. Repeating it is safe only under the same update ID (the server and the card
 * workflow answer a known ID with its first outcome), so the ID is fixed before the first try.
 */
import { randomUUID } from 'node:crypto';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { google, temporal } from '@temporalio/proto';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Per-operation codes under which nothing was applied and a second try can pass: the operation
 * was aborted for the other's sake (ABORTED), the workflow was closing or busy (ABORTED after the
 * server's own retry, RESOURCE_EXHAUSTED "workflow is closing"), a start lost the race for the ID
 * (UNAVAILABLE), or the workflow's task had just failed (a WorkflowNotReady detail).
 */
const NOT_APPLIED = new Set<number>([GrpcStatus.OK, GrpcStatus.ABORTED, GrpcStatus.UNAVAILABLE, GrpcStatus.RESOURCE_EXHAUSTED]);
const MULTI_OPERATION_FAILURE = 'temporal.api.errordetails.v1.MultiOperationExecutionFailure';
const WORKFLOW_NOT_READY = 'temporal.api.errordetails.v1.WorkflowNotReadyFailure';

interface GrpcLike {
  code?: number;
  metadata?: { get(key: string): unknown[] };
}

/** The gRPC error under the SDK's wrapper (a ServiceError keeps it as its cause). */
function grpcErrorOf(err: unknown): GrpcLike | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof (e as GrpcLike).code === 'number' && (e as GrpcLike).metadata) return e as GrpcLike;
  }
  return undefined;
}

const typeOf = (typeUrl: string | null | undefined): string => (typeUrl ?? '').replace(/^type\.googleapis\.com\//, '');

/**
 * Each operation's status, when the error carries a MultiOperationExecutionFailure. Read from the
 * metadata, which the SDK leaves as sent (it overwrites the error's own code with the first
 * operation status it finds telling).
 */
function operationStatuses(err: GrpcLike): google.rpc.IStatus[] | undefined {
  const raw = err.metadata?.get('grpc-status-details-bin')?.[0];
  if (!(raw instanceof Uint8Array)) return undefined;
  const multi = google.rpc.Status.decode(raw).details?.find((d) => typeOf(d.type_url) === MULTI_OPERATION_FAILURE && d.value);
  return multi ? temporal.api.errordetails.v1.MultiOperationExecutionFailure.decode(multi.value as Uint8Array).statuses : undefined;
}

function notApplied(status: google.rpc.IStatus): boolean {
  return NOT_APPLIED.has(status.code ?? GrpcStatus.OK) || (status.details ?? []).some((d) => typeOf(d.type_url) === WORKFLOW_NOT_READY);
}

/** Whether an Update-with-Start failed with nothing applied, for a reason a second try can pass. */
export function isTransientUpdateWithStartFailure(err: unknown): boolean {
  const grpc = grpcErrorOf(err);
  if (!grpc || grpc.code === undefined) return false;
  const statuses = operationStatuses(grpc);
  if (statuses && statuses.length > 0) return statuses.every(notApplied);
  return grpc.code === GrpcStatus.ABORTED || grpc.code === GrpcStatus.UNAVAILABLE;
}

export interface RetryPlan {
  attempts: number;
  firstDelayMs: number;
}

/** A continue-as-new takes one workflow task; a few tries over about three seconds outlast it. */
export const UPDATE_WITH_START_RETRY: RetryPlan = { attempts: 6, firstDelayMs: 100 };

/**
 * Sends `send(updateId)` until it succeeds, fails for another reason, or the plan's tries are
 * spent; every try carries the same update ID (the caller's, or one drawn here once).
 */
export async function withStableUpdateId<T>(updateId: string | undefined, send: (updateId: string) => Promise<T>, plan: RetryPlan = UPDATE_WITH_START_RETRY): Promise<T> {
  const id = updateId ?? randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      return await send(id);
    } catch (err) {
      if (attempt >= plan.attempts || !isTransientUpdateWithStartFailure(err)) throw err;
      await sleep(plan.firstDelayMs * 2 ** (attempt - 1));
    }
  }
}
