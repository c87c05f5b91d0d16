/** Where one flow stands, as plain data an operator (or a script) can read. */
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, type TypedSearchAttributes } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { CARD_ID, FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import { definedOnly } from '../shared/defined-only';

export interface PendingActivity {
  activityType: string;
  state: string;
  attempt: number;
  lastFailure?: string;
}

export interface FlowStatus {
  workflowId: string;
  runId: string;
  type: string;
  /** RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, CONTINUED_AS_NEW, TIMED_OUT. */
  status: string;
  taskQueue: string;
  startTime: string;
  closeTime?: string;
  searchAttributes: { CardId?: string; FlowKind?: string; ProviderStatus?: string };
  pendingActivities: PendingActivity[];
  /** Only for a FAILED flow: the failure's type and message. */
  failure?: { type: string; message: string };
}

const ActivityState = temporal.api.enums.v1.PendingActivityState;

export async function describeFlow(handle: WorkflowHandle): Promise<FlowStatus> {
  const d = await handle.describe();
  const status: FlowStatus = {
    workflowId: d.workflowId,
    runId: d.runId,
    type: d.type,
    status: d.status.name,
    taskQueue: d.taskQueue,
    startTime: d.startTime.toISOString(),
    ...(d.closeTime ? { closeTime: d.closeTime.toISOString() } : {}),
    searchAttributes: flowSearchAttributes(d.typedSearchAttributes),
    pendingActivities: (d.raw.pendingActivities ?? []).map((a) => ({
      activityType: a.activityType?.name ?? 'unknown',
      state: ActivityState[a.state ?? 0]?.replace('PENDING_ACTIVITY_STATE_', '') ?? 'UNKNOWN',
      attempt: a.attempt ?? 1,
      ...(a.lastFailure?.message ? { lastFailure: a.lastFailure.message } : {}),
    })),
  };
  if (d.status.name === 'FAILED') status.failure = await failureOf(handle);
  return status;
}

/** Our search attributes of a flow, those it has. */
export function flowSearchAttributes(attrs: TypedSearchAttributes): FlowStatus['searchAttributes'] {
  return definedOnly({ CardId: attrs.get(CARD_ID), FlowKind: attrs.get(FLOW_KIND), ProviderStatus: attrs.get(PROVIDER_STATUS) });
}

/** The result call re-throws the decoded failure: the only way to read its (encrypted) message. */
async function failureOf(handle: WorkflowHandle): Promise<FlowStatus['failure']> {
  try {
    await handle.result();
    return undefined;
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof ApplicationFailure) return { type: cause.type ?? 'ApplicationFailure', message: cause.message };
    return { type: (cause as Error | undefined)?.name ?? 'Failure', message: (cause as Error | undefined)?.message ?? String(err) };
  }
}
