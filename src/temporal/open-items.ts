/**
 * Open items read back from Temporal (shared/open-items.ts): the running `openItem` workflows are
 * the open items (and those whose latest run ended without a record, until they are reopened), their
 * completed runs the records of what moved. The CLI (`open`, `settle`) and
 * the worker's gauges read them here; an item is found by any reference its memo lists.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type WorkflowExecutionDescription, type WorkflowExecutionInfo } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { literal } from '../shared/reconciliation';
import { CARD_ID, FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import { MONEY_ATTEMPT_WORKFLOW_TYPE, OPEN_ITEM_MEMO, OPEN_ITEM_WORKFLOW_TYPE, type MoneyAttempt, openItemId, openItemMemo, type ClosedItem, type OpenItem, type OpenItemOwner, type OpenItemSettlement } from '../shared/open-items';
import { closeOpenItemUpdate } from '../shared/messages';
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
  /**
   * Its latest run ended without a record (TERMINATED, CANCELED, TIMED_OUT, FAILED): still an open item,
   * listed and paged as one, until the next reconcile-money run (or `settle`) opens it again (reopenEndedItem).
   */
  ended?: string;
}

/** How an item's run can end without its record (a continue-as-new is no end; Completed holds the record). */
const ENDED_STATUSES = ['Terminated', 'Canceled', 'TimedOut', 'Failed'];
const ENDED_STATUS_NAMES = new Set(['TERMINATED', 'CANCELLED', 'TIMED_OUT', 'FAILED']);

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
      typedSearchAttributes: itemSearchAttributes(item),
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

/** The owner's item as its caller is answered from it: `record` once it closed; none while it is open. */
export interface ItemState {
  itemId: string;
  record?: ClosedItem;
}

/**
 * The owner's item, open or closed; undefined when it has none. Open: its `openItem` workflow runs, or
 * ended without its record (it is still owed one), or its attempt still runs (an owner that ended
 * unsure is opening it: the flow's own end, or the attempt's next look). An attempt that completed
 * was settled without becoming an item: none.
 */
export async function itemStateOf(client: Client, owner: OpenItemOwner): Promise<ItemState | undefined> {
  const itemId = openItemId(owner);
  const info = await latestRun(client, itemId);
  if (!info) return undefined;
  if (info.status.name === 'RUNNING') return { itemId };
  if (info.type !== OPEN_ITEM_WORKFLOW_TYPE) return undefined;
  if (info.status.name !== 'COMPLETED') return { itemId };
  return { itemId, record: (await client.workflow.getHandle(itemId, info.runId).result()) as ClosedItem };
}

/** The open items on `taskQueue`, oldest first: the running ones and those whose latest run ended without a record. */
export async function listOpenItems(client: Client, taskQueue: string): Promise<OpenItemRow[]> {
  const running = await rows(client, `${itemsOn(taskQueue)} AND ExecutionStatus = 'Running'`);
  const ended = await endedItems(client, taskQueue, new Set(running.map((r) => r.itemId)));
  return [...running, ...ended].sort((a, b) => a.openedAt - b.openedAt);
}

/**
 * The items whose latest run ended without a record (terminated, cancelled, timed out, failed): an
 * item cannot vanish that way (issue 51). A run ended so and since followed by another (reopened,
 * running or closed with its record) is not listed: only the latest run of an ID counts.
 */
export async function endedItems(client: Client, taskQueue: string, running: ReadonlySet<string> = new Set()): Promise<OpenItemRow[]> {
  // An attempt stopped by hand before it became its item is no less unaccounted money (temporal/attempts.ts).
  const query = `WorkflowType IN (${literal(OPEN_ITEM_WORKFLOW_TYPE)}, ${literal(MONEY_ATTEMPT_WORKFLOW_TYPE)}) AND TaskQueue = ${literal(taskQueue)} AND ExecutionStatus IN (${ENDED_STATUSES.map(literal).join(', ')})`;
  const candidates = (await rows(client, query)).filter((r) => !running.has(r.itemId));
  const latest = await Promise.all(candidates.map((row) => latestRun(client, row.itemId)));
  return candidates.filter((row, i) => latest[i]?.runId === row.runId && ITEM_TYPES.has(latest[i]?.type ?? ''));
}

const ITEM_TYPES: ReadonlySet<string> = new Set([OPEN_ITEM_WORKFLOW_TYPE, MONEY_ATTEMPT_WORKFLOW_TYPE]);

/**
 * Opens again an item whose latest run ended without a record: a new run under the same ID with the
 * same item, its input as the ended run was started with (decoded through our codec) and what the
 * provider last said. Temporal refuses it unless that run ended without completing
 * (ALLOW_DUPLICATE_FAILED_ONLY), so a record is never overwritten and two reopeners start one run.
 * Returns whether this call reopened it.
 */
export async function reopenEndedItem(client: Client, taskQueue: string, itemId: string): Promise<boolean> {
  const info = await latestRun(client, itemId);
  if (!info || !ITEM_TYPES.has(info.type) || !ENDED_STATUS_NAMES.has(info.status.name)) return false;
  const started = await client.workflowService.getWorkflowExecutionHistory({ namespace: client.options.namespace, execution: { workflowId: itemId, runId: info.runId }, maximumPageSize: 1 });
  const payloads = started.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  const startedWith = await decodeFromPayloadsAtIndex<(OpenItem & { nextAskMs?: number }) | MoneyAttempt>(client.workflow.options.loadedDataConverter, 0, payloads);
  // An attempt's input holds the item it would have become.
  const input = startedWith && 'item' in startedWith ? { ...startedWith.item, reason: `attempt ${info.status.name.toLowerCase()} before the provider's word` } : startedWith;
  if (!input?.owner) return false;
  // Asked again from its first pace: the provider may have answered while it was stopped.
  const { nextAskMs: _wait, ...carried } = input;
  const item: OpenItem = { ...carried, lastSaid: info.typedSearchAttributes.get(PROVIDER_STATUS) ?? input.lastSaid };
  try {
    await client.workflow.start(OPEN_ITEM_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: itemId,
      args: [item],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      memo: openItemMemo(itemId, item),
      typedSearchAttributes: itemSearchAttributes(item),
    });
    return true;
  } catch (err) {
    // Reopened by another, or closed with a record in between: nothing to do.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

async function latestRun(client: Client, workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
  return client.workflow
    .getHandle(workflowId)
    .describe()
    .catch((err: unknown) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err)));
}

function itemSearchAttributes(item: OpenItem): SearchAttributePair[] {
  return [
    { key: FLOW_KIND, value: OPEN_ITEM_WORKFLOW_TYPE },
    { key: PROVIDER_STATUS, value: item.lastSaid },
    ...(item.cardId ? [{ key: CARD_ID, value: item.cardId }] : []),
  ];
}

/** The items `ref` names (any reference: item ID, workflow ID, run, update ID, key, merOrderNo, orderNo): the open ones, else the closed ones. */
export async function itemsNamed(client: Client, taskQueue: string, ref: string): Promise<OpenItemRow[]> {
  const open = (await listOpenItems(client, taskQueue)).filter((row) => row.refs.includes(ref));
  if (open.length > 0) return open;
  const closed = await rows(client, `${itemsOn(taskQueue)} AND ExecutionStatus = 'Completed'`);
  return closed.filter((row) => row.refs.includes(ref)).reverse();
}

/** A closed item's record (its result). */
/**
 * The operator's settlement of an item listed open; undefined when it closed in the meantime (the
 * provider's answer came between the list and the update: the server says its run has completed,
 * and its record is what the operator gets, as for one closed before).
 */
export async function settleOpenItem(client: Client, row: Pick<OpenItemRow, 'itemId'>, plan: OpenItemSettlement): Promise<ClosedItem | undefined> {
  try {
    return await client.workflow.getHandle(row.itemId).executeUpdate(closeOpenItemUpdate, { args: [plan] });
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

export async function closedItem(client: Client, row: OpenItemRow): Promise<ClosedItem> {
  return (await client.workflow.getHandle(row.itemId, row.runId).result()) as ClosedItem;
}

function itemsOn(taskQueue: string): string {
  return `WorkflowType = ${literal(OPEN_ITEM_WORKFLOW_TYPE)} AND TaskQueue = ${literal(taskQueue)}`;
}

async function rows(client: Client, query: string): Promise<OpenItemRow[]> {
  // One run per item: the running one, or the completed one that holds its record (earlier runs continued as new). Within
  // visibility's lag a run that just continued as new is still listed Running beside its successor (a settle under load
  // was refused as "several open items" naming one item twice): the latest started is the item.
  const latest = new Map<string, WorkflowExecutionInfo>();
  for await (const info of client.workflow.list({ query })) {
    const seen = latest.get(info.workflowId);
    if (!seen || info.startTime.getTime() > seen.startTime.getTime()) latest.set(info.workflowId, info);
  }
  return [...latest.values()].map(rowOf).sort((a, b) => a.openedAt - b.openedAt);
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
    ...(ENDED_STATUS_NAMES.has(info.status.name) ? { ended: info.status.name } : {}),
  };
}
