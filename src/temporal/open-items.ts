/**
 * Open items read back from Temporal (shared/open-items.ts): the running `openItem` workflows are
 * the open items, their completed runs the records of what moved. The CLI (`open`, `settle`) and
 * the worker's gauges read them here; an item is found by any reference its memo lists.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { literal } from '../shared/reconciliation';
import { CARD_ID, FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import { OPEN_ITEM_MEMO, OPEN_ITEM_WORKFLOW_TYPE, openItemId, openItemMemo, type ClosedItem, type OpenItem, type OpenItemOwner } from '../shared/open-items';
import { openPendingAttempt } from './attempts';

export interface OpenItemRow {
  itemId: string;
  runId: string;
  flowKind: string;
  /** What ended its flow or update without an answer. */
  reason: string;
  /** What the provider last said (its ProviderStatus). */
  lastSaid: string;
  cardId?: string;
  openedAt: number;
  refs: string[];
  open: boolean;
}

/** Starts the owner's item on `taskQueue` unless it exists (open, or closed with its record); its workflow ID. */
export async function startOpenItem(client: Client, taskQueue: string, item: OpenItem): Promise<string> {
  const workflowId = openItemId(item.owner);
  try {
    await client.workflow.start(OPEN_ITEM_WORKFLOW_TYPE, {
      taskQueue,
      workflowId,
      args: [item],
      // One item per owner, for ever: a closed one is its record, never opened again.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      memo: openItemMemo(workflowId, item),
      typedSearchAttributes: [
        { key: FLOW_KIND, value: OPEN_ITEM_WORKFLOW_TYPE },
        { key: PROVIDER_STATUS, value: item.lastSaid },
        ...(item.cardId ? [{ key: CARD_ID, value: item.cardId }] : []),
      ],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    // Its attempt was recorded before the POST (temporal/attempts.ts): still pending, it is opened as this item now.
    await openPendingAttempt(client, workflowId, item);
  }
  return workflowId;
}

/** The record of the owner's item once it closed; undefined while it is open, or when it has none (an attempt settled without becoming an item is no item). */
export async function recordOf(client: Client, owner: OpenItemOwner): Promise<ClosedItem | undefined> {
  const handle = client.workflow.getHandle(openItemId(owner));
  try {
    const info = await handle.describe();
    if (info.status.name !== 'COMPLETED' || info.type !== OPEN_ITEM_WORKFLOW_TYPE) return undefined;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
  return (await handle.result()) as ClosedItem;
}

/** The open items on `taskQueue`, oldest first. */
export async function listOpenItems(client: Client, taskQueue: string): Promise<OpenItemRow[]> {
  return rows(client, `${itemsOn(taskQueue)} AND ExecutionStatus = 'Running'`);
}

/** The items `ref` names (any reference: item ID, workflow ID, run, update ID, key, merOrderNo, orderNo): the open ones, else the closed ones. */
export async function itemsNamed(client: Client, taskQueue: string, ref: string): Promise<OpenItemRow[]> {
  const open = (await listOpenItems(client, taskQueue)).filter((row) => row.refs.includes(ref));
  if (open.length > 0) return open;
  const closed = await rows(client, `${itemsOn(taskQueue)} AND ExecutionStatus = 'Completed'`);
  return closed.filter((row) => row.refs.includes(ref)).reverse();
}

/** A closed item's record (its result). */
export async function closedItem(client: Client, row: OpenItemRow): Promise<ClosedItem> {
  return (await client.workflow.getHandle(row.itemId, row.runId).result()) as ClosedItem;
}

function itemsOn(taskQueue: string): string {
  return `WorkflowType = ${literal(OPEN_ITEM_WORKFLOW_TYPE)} AND TaskQueue = ${literal(taskQueue)}`;
}

async function rows(client: Client, query: string): Promise<OpenItemRow[]> {
  // One run per item is listed: the running one, or the completed one that holds its record (earlier runs continued as new).
  const out: OpenItemRow[] = [];
  for await (const info of client.workflow.list({ query })) out.push(rowOf(info));
  return out.sort((a, b) => a.openedAt - b.openedAt);
}

function rowOf(info: WorkflowExecutionInfo): OpenItemRow {
  const memo = (info.memo?.[OPEN_ITEM_MEMO] ?? {}) as { refs?: string[]; flowKind?: string; openedAt?: number; reason?: string };
  const cardId = info.typedSearchAttributes.get(CARD_ID);
  return {
    itemId: info.workflowId,
    runId: info.runId,
    flowKind: memo.flowKind ?? 'unknown',
    reason: memo.reason ?? 'unknown',
    lastSaid: info.typedSearchAttributes.get(PROVIDER_STATUS) ?? 'UNKNOWN',
    ...(cardId ? { cardId } : {}),
    openedAt: memo.openedAt ?? info.startTime.getTime(),
    refs: memo.refs ?? [info.workflowId],
    open: info.status.name === 'RUNNING',
  };
}
