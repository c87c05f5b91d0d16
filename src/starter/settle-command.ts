/**
 * `settle REF [--found moved|not-moved] [--note TEXT]`: settles an open item (shared/open-items.ts)
 * by any reference the operator holds: the item's ID, the workflow ID, the run ID, a card update's
 * ID, the idempotency key, the merOrderNo or orderNo. The item asks the provider first: its final
 * word settles it (a `--found` that contradicts it is refused); while it still works, nothing is
 * settled; where it cannot say (no lookup, or silence under a key the spec does not honour), the
 * operator's `--found` is recorded as given. A flow from before open items is settled as before: the
 * settleOutcome workflow under `settlement/<workflowId>`.
 * Exit 0: settled, or settled before; 4: the provider still works on it; 1: `--found` contradicts it
 * or is missing; 2: nothing by that reference, several items by it, or bad flags.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { SETTLE_WORKFLOW_TYPE, settleInputErrors, settlementWorkflowId, type SettleInput, type Settlement } from '../shared/settlement';
import type { ClosedItem } from '../shared/open-items';
import { unsettledOutcomes } from '../temporal/settlements';
import { closedItem, itemsNamed, listOpenItems, reopenEndedItem, settleOpenItem, type OpenItemRow } from '../temporal/open-items';
import { UsageError, assertNoErrors, flag, type Flags } from './args';
import { leftRunning, type Command, type CommandContext, type CommandOutcome } from './command-kit';
import { renderTable } from './output';
import { isCardIssuingError, toCardIssuingError } from '../client';

interface SettlePlan {
  /** Any reference of an open item, or the workflow ID or key of a flow from before open items. */
  ref: string;
  found?: SettleInput['found'];
  note?: string;
}

export const settle: Command<SettlePlan> = {
  starts: true,
  usage: 'settle REF [--found moved|not-moved] [--note TEXT]   (REF: item ID, workflow ID, run ID, update ID, key, merOrderNo, orderNo)',
  description: 'Settle an open item: the provider is asked first; --found records what a person found when it has no final word.',
  example: 'settle send-payout/PO-2026-0001 --found not-moved --note "OPS-44: bank confirmed no transfer"',
  options: { found: { type: 'string' }, note: { type: 'string' } },
  positional: 'REF',
  parse(flags: Flags, positional: string | undefined) {
    if (!positional) throw new UsageError('REF is required: any reference of the open item (its ID, the workflow ID, run ID, update ID, idempotency key, merOrderNo or orderNo)');
    const found = flag(flags, 'found') as SettleInput['found'];
    const note = flag(flags, 'note');
    assertNoErrors(settleInputErrors({ workflowId: positional, found, note }), { workflowId: 'REF', found: '--found', note: '--note' });
    return { ref: positional, ...(found === undefined ? {} : { found }), ...(note === undefined ? {} : { note }) };
  },
  async run(plan, ctx) {
    const { client, taskQueue } = (await ctx.client()).temporal;
    const items = await itemsNamed(client, taskQueue, plan.ref);
    if (items.length > 1 && (items[0].open || items[0].ended)) throw new UsageError(`"${plan.ref}" names several open items (${items.map((i) => i.itemId).join(', ')}): settle each by its item ID`);
    if (items.length === 1) return settleItem(client, taskQueue, items[0], plan, ctx);
    if (items.length > 1) return closedItems(client, items);
    const workflowId = await flowNamed(client, taskQueue, plan.ref);
    ctx.following(settlementWorkflowId(workflowId));
    const input = { workflowId, ...(plan.found ? { found: plan.found } : {}), ...(plan.note ? { note: plan.note } : {}) };
    if (!ctx.wait) {
      const { handle, before } = await startSettlement(client, taskQueue, input);
      ctx.progress(before ? `${workflowId} was settled before` : `started ${handle.workflowId}`);
      return leftRunning(ctx, handle.workflowId, { workflowId: handle.workflowId, settledBefore: before }, `the settlement: npm run starter -- status ${handle.workflowId}`);
    }
    const { settlement, before } = await settleFlow(client, taskQueue, input);
    return { ok: true, workflowId: settlementWorkflowId(workflowId), result: { ...settlement, settledBefore: before }, text: settlementText(settlement, before) } satisfies CommandOutcome;
  },
};

/**
 * `open`: every open item on the main queue, oldest first: what may have moved and what the provider last
 * said. An item whose run was terminated, cancelled or timed out is listed as ended without a record
 * (state `ended: TERMINATED`): still open, reopened by the next reconcile-money run or by `settle`.
 */
export const openItems: Command<Record<string, never>> = {
  usage: 'open',
  description: 'List the open items (money that may have moved, not yet known), oldest first.',
  example: 'open',
  options: {},
  parse: () => ({}),
  async run(_plan, ctx) {
    const { client, taskQueue } = (await ctx.client()).temporal;
    const items = await listOpenItems(client, taskQueue);
    const now = Date.now();
    const rows = items.map((i) => ({ item: i.itemId, state: i.ended ? `ended: ${i.ended}` : 'open', flow: i.flowKind, reason: i.reason, provider: i.lastSaid, openedAt: new Date(i.openedAt).toISOString(), age: ageOf(now - i.openedAt) }));
    const ended = items.filter((i) => i.ended).length;
    const note = ended === 0 ? [] : [`${ended} ended without a record (its run stopped before the provider's word or a settlement): still open; the next reconcile-money run reopens it, or settle it`];
    return {
      ok: true,
      result: { openItems: items },
      text: items.length === 0 ? 'no open items' : [renderTable(rows, ['item', 'state', 'flow', 'reason', 'provider', 'openedAt', 'age']), ...note].join('\n'),
    };
  },
};

function ageOf(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.floor(hours / 24)} d`;
}

/** The item's record: the operator's settlement of an open one (the provider asked first), or the record of one closed before. */
async function settleItem(client: Client, taskQueue: string, row: OpenItemRow, plan: SettlePlan, ctx: CommandContext): Promise<CommandOutcome> {
  ctx.following(row.itemId);
  // Ended without a record: opened again first (the same item), then settled as any open one.
  if (row.ended) {
    await reopenEndedItem(client, taskQueue, row.itemId);
    row = { ...row, open: true };
  }
  let record: ClosedItem;
  let before = !row.open;
  try {
    if (row.open) {
      const settled = await settleOpenItem(client, row, { ...(plan.found ? { found: plan.found } : {}), ...(plan.note ? { note: plan.note } : {}) });
      record = settled ?? (await closedItem(client, row));
      before = settled === undefined;
    } else {
      record = await closedItem(client, row);
    }
  } catch (err) {
    throw toCardIssuingError(err, { workflowId: row.itemId });
  }
  if (before && plan.found !== undefined && plan.found !== record.verdict) {
    const message = `${row.itemId}: found says ${plan.found}, its record says ${record.verdict} (closed ${record.closedAt} by ${record.by === 'provider' ? "the provider's answer" : "an operator's word"}); nothing recorded`;
    return { ok: false, workflowId: row.itemId, result: { ...record, settledBefore: true }, failure: { type: 'SettlementContradicted', message, details: [{ itemId: row.itemId, found: plan.found, verdict: record.verdict }] } };
  }
  return { ok: true, workflowId: row.itemId, result: { ...record, settledBefore: before }, text: itemText(record, before) };
}

/** Several closed items by one reference (the runs of one workflow ID, say): each one's record. */
async function closedItems(client: Client, rows: OpenItemRow[]): Promise<CommandOutcome> {
  const records = await Promise.all(rows.map((row) => closedItem(client, row)));
  return { ok: true, result: { records, settledBefore: true }, text: records.map((r) => itemText(r, true)).join('\n\n') };
}

function itemText(r: ClosedItem, before: boolean): string {
  const lookup = r.item.lookup ? `${r.item.lookup.resource} ${r.item.lookup.ref}` : 'no lookup';
  return [
    `${r.itemId} (${r.item.flowKind}): ${r.verdict === 'moved' ? 'MOVED' : 'NOT MOVED'}, by ${r.by === 'provider' ? "the provider's answer" : "the operator's word"}${before ? `, closed before (${r.closedAt})` : ''}`,
    `${lookup}: the provider said ${r.providerSaid}${r.answeredUnder ? ` under ${r.answeredUnder}` : ''}${r.item.amount === undefined ? '' : `; amount ${r.item.amount}`}`,
    ...(r.note ? [`note: ${r.note}`] : []),
  ].join('\n');
}

/**
 * The flow `ref` names: a workflow ID when one exists; else the one unsettled OutcomeUnknown flow
 * whose caller's key it is (the last part of its workflow ID) or whose failure names it as its key.
 */
async function flowNamed(client: Client, taskQueue: string, ref: string): Promise<string> {
  if (await exists(client, ref)) return ref;
  const unsettled = await unsettledOutcomes(client, taskQueue);
  const keyed = await Promise.all(unsettled.map(async (flow) => flow.workflowId.endsWith(`/${ref}`) || (await failureKey(client, flow)) === ref));
  const matches = unsettled.filter((_, i) => keyed[i]).map((f) => f.workflowId);
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) throw new UsageError(`key "${ref}" names several unsettled flows (${matches.join(', ')}): settle each by its workflow ID`);
  throw new UsageError(`no flow has the workflow ID "${ref}", and no unsettled OutcomeUnknown flow on ${taskQueue} has it as its key`);
}

async function exists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** The idempotency key an OutcomeUnknown failure names in its details. */
async function failureKey(client: Client, flow: { workflowId: string; runId: string }): Promise<string | undefined> {
  const failure = await client.workflow
    .getHandle(flow.workflowId, flow.runId)
    .result()
    .then(() => undefined, (err: unknown) => toCardIssuingError(err));
  if (!isCardIssuingError(failure)) return undefined;
  const withKey = failure.details.find((d): d is { idempotencyKey: string } => typeof (d as { idempotencyKey?: unknown } | null)?.idempotencyKey === 'string');
  return withKey?.idempotencyKey;
}

/** Runs the settlement (or joins one running); a flow settled before answers with that settlement. */
export async function settleFlow(client: Client, taskQueue: string, input: SettleInput): Promise<{ settlement: Settlement; before: boolean }> {
  const { handle, before } = await startSettlement(client, taskQueue, input);
  try {
    return { settlement: (await handle.result()) as Settlement, before };
  } catch (err) {
    throw toCardIssuingError(err, { workflowId: handle.workflowId });
  }
}

/** Starts the settlement (or joins one running); `before`: the flow was settled before, and the handle is that settlement's. */
async function startSettlement(client: Client, taskQueue: string, input: SettleInput): Promise<{ handle: WorkflowHandle; before: boolean }> {
  const workflowId = settlementWorkflowId(input.workflowId);
  try {
    const handle = await client.workflow.start(SETTLE_WORKFLOW_TYPE, {
      taskQueue,
      workflowId,
      args: [input],
      // A settlement that failed (still processing) may be tried again; a completed one stands.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    return { handle, before: false };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw toCardIssuingError(err, { workflowId });
    return { handle: client.workflow.getHandle(workflowId), before: true };
  }
}

function settlementText(s: Settlement, before: boolean): string {
  const head = `${s.workflowId} (${s.flowKind}): ${s.verdict === 'moved' ? 'MOVED' : 'NOT MOVED'}, by ${s.by === 'provider' ? "the provider's answers" : "the operator's word"}${before ? `, settled before (${s.settledAt})` : ''}`;
  const rows = s.asked.map((a) => ({ resource: a.resource, ref: a.ref, provider: a.known ? a.status : 'no record', amount: a.amount ?? '' }));
  return [head, ...(rows.length > 0 ? [renderTable(rows, ['resource', 'ref', 'provider', 'amount'], { rule: true })] : []), ...(s.note ? [`note: ${s.note}`] : [])].join('\n');
}
