/** Where one flow stands, as plain data an operator (or a script) can read. */
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, type TypedSearchAttributes } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { CARD_ID, FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import { definedOnly } from '../shared/defined-only';

/** One activity the flow is waiting on, as Temporal's describe reports it. */
export interface PendingActivity {
  /** The activity's name (e.g. `createCard`). */
  activityType: string;
  /** SCHEDULED, STARTED, CANCEL_REQUESTED, PAUSED or PAUSE_REQUESTED (Temporal's PendingActivityState without its prefix). */
  state: string;
  /** The attempt under way, counting from 1: above 1, earlier attempts failed and Temporal is retrying. */
  attempt: number;
  /** The last failed attempt's message, when one failed. */
  lastFailure?: string;
}

/** Where one flow stands (`describeFlow`, the client's `status`): its identity, status, search attributes and what it waits on. */
export interface FlowStatus {
  /** The flow's workflow ID (e.g. `card/<cardId>`, `send-payout/<key>`). */
  workflowId: string;
  /** The run described: the latest run of the workflow ID unless the handle named one. */
  runId: string;
  /** The workflow type, e.g. `issueCard`, `sendPayout`. */
  type: string;
  /** RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, CONTINUED_AS_NEW, TIMED_OUT. */
  status: string;
  /** The task queue the run is on. */
  taskQueue: string;
  /** When the run started: an ISO 8601 timestamp in UTC. */
  startTime: string;
  /** When the run closed (ISO 8601, UTC); absent while it runs. */
  closeTime?: string;
  /** Our search attributes the flow has set: the card it acts on, its kind, and the provider's last status it recorded. */
  searchAttributes: { CardId?: string; FlowKind?: string; ProviderStatus?: string };
  /** The activities it is waiting on; empty when it waits on none (a webhook, a timer, or closed). */
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
