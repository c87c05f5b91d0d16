/**
 * The books (issues 39 and 51): every movement in the sandbox's ledger is named by one record of ours
 * (a completed flow or card update, a closed item, an attempt the provider's word settled) or is still
 * an open item, and nothing we record as moved is missing from the ledger. Shared by the books test and
 * its soak.
 */
import type { AttemptRecord, ClosedItem } from '../../src/shared/open-items';
import { MONEY_ATTEMPT_WORKFLOW_TYPE, OPEN_ITEM_WORKFLOW_TYPE } from '../../src/shared/open-items';
import { cardMovementsQuery } from '../../src/shared/messages';
import { entityQueue } from '../../src/shared/entity-queues';
import type { LedgerEntry } from '../../src/sandbox/ledger';
import { runCli } from '../../src/starter/run';
import type { Stack } from '../helpers/stack';
import { ledger } from './helpers';

/** Kinds of ledger entries our calls cause: what the books must account for. */
export const OUR_MOVES: ReadonlyArray<LedgerEntry['kind']> = ['CARD_ISSUE', 'FUNDING', 'WITHDRAWAL', 'ESIM_CHARGE', 'PAYOUT'];

export interface Books {
  /** References (key, merOrderNo, orderNo, cardId) our records say moved. */
  moved: Set<string>;
  /** References of items still open. */
  open: Set<string>;
}

export async function ourBooks(stack: Stack): Promise<Books> {
  const moved = new Set<string>();
  const open = new Set<string>();
  const add = (set: Set<string>, ...refs: Array<unknown>) => refs.forEach((r) => typeof r === 'string' && r && set.add(r));
  for await (const run of stack.client.workflow.list({ query: `TaskQueue = '${stack.taskQueue}'` })) {
    if (run.type === OPEN_ITEM_WORKFLOW_TYPE) {
      if (run.status.name === 'RUNNING') add(open, ...(((run.memo?.openItem as { refs?: string[] }) ?? {}).refs ?? []));
      else if (run.status.name === 'COMPLETED') {
        const record = (await stack.client.workflow.getHandle(run.workflowId, run.runId).result()) as ClosedItem;
        // The provider names a card's issue by the card, not by the key it was created under.
        if (record.verdict === 'moved') add(moved, record.item.lookup?.resource === 'card' ? undefined : record.item.idempotencyKey, record.item.lookup?.ref, record.answeredUnder);
      }
      continue;
    }
    if (run.status.name !== 'COMPLETED') continue;
    const result = (await stack.client.workflow.getHandle(run.workflowId, run.runId).result()) as Record<string, unknown> | null;
    // An attempt the provider's final word settled is a record of its own (its flow may have stopped right after); one its owner's result settled is that result's.
    const attempt = run.type === MONEY_ATTEMPT_WORKFLOW_TYPE ? (result as unknown as AttemptRecord) : undefined;
    if (attempt?.settledBy === 'provider' && attempt.verdict === 'moved') add(moved, attempt.idempotencyKey, attempt.lookupRef);
    if (run.type === 'fundCard' || run.type === 'withdrawFromCard') add(moved, result?.idempotencyKey);
    if (run.type === 'purchaseEsim' || run.type === 'rechargeEsim') add(moved, result?.orderNo);
    if (run.type === 'sendPayout' && result?.status === 'COMPLETED') add(moved, result?.merOrderNo);
    if (run.type === 'issueCard') add(moved, result?.cardId);
  }
  // A card's money updates: their results, from the card workflow's own record of them.
  for await (const run of stack.client.workflow.list({ query: `WorkflowType = 'cardLifecycle' AND TaskQueue = '${entityQueue(stack.taskQueue)}' AND ExecutionStatus = 'Running'` })) {
    for (const m of await stack.client.workflow.getHandle(run.workflowId).query(cardMovementsQuery)) if ('result' in m) add(moved, m.result?.idempotencyKey);
  }
  return { moved, open };
}

/** How the provider names an entry: the idempotency key of a movement, else what it belongs to (cardId, orderNo, merOrderNo). */
export const refsOf = (e: LedgerEntry): string[] => (e.kind === 'FUNDING' || e.kind === 'WITHDRAWAL' ? [e.idempotencyKey ?? ''] : [e.ref, e.idempotencyKey ?? '']).filter(Boolean);

export async function ourEntries(stack: Stack): Promise<LedgerEntry[]> {
  return (await stack.control<{ entries: LedgerEntry[] }>('GET', '/ledger/entries')).entries.filter((e) => OUR_MOVES.includes(e.kind));
}

async function openItems(stack: Stack): Promise<Array<{ itemId: string; refs: string[] }>> {
  const items: Array<{ itemId: string; refs: string[] }> = [];
  for await (const run of stack.client.workflow.list({ query: `WorkflowType = '${OPEN_ITEM_WORKFLOW_TYPE}' AND TaskQueue = '${stack.taskQueue}' AND ExecutionStatus = 'Running'` })) {
    items.push({ itemId: run.workflowId, refs: ((run.memo?.openItem as { refs?: string[] }) ?? {}).refs ?? [] });
  }
  return items;
}

/**
 * Settles every open item as an operator would: `settle ITEM`, which asks the provider at once (exit 0
 * when its word closes it, 4 while it still works on it). Where the provider cannot say (no lookup, or
 * a silence too short to prove anything: exit 1, found required), the operator checks the provider's
 * records (here its ledger) and gives the finding with a note.
 */
export async function settleEveryOpenItem(stack: Stack): Promise<void> {
  let said = '';
  const quiet = { stdout: () => undefined, stderr: (t: string) => void (said = t) };
  for (let turn = 0; ; turn++) {
    const items = await openItems(stack);
    if (items.length === 0) return;
    if (turn > 30) throw new Error(`open items left: ${items.map((i) => i.itemId).join(', ')}`);
    await new Promise((r) => setTimeout(r, 3_000));
    const atProvider = new Set((await ourEntries(stack)).flatMap(refsOf));
    for (const { itemId, refs } of items) {
      const code = await runCli(['settle', itemId], () => stack.config, quiet);
      if (code !== 1) {
        if (![0, 4].includes(code)) throw new Error(`settle ${itemId} exited ${code}: ${said}`);
        continue;
      }
      const found = refs.some((r) => atProvider.has(r)) ? 'moved' : 'not-moved';
      const given = await runCli(['settle', itemId, '--found', found, '--note', 'checked in the provider portal'], () => stack.config, quiet);
      if (given !== 0) throw new Error(`settle ${itemId} --found ${found} exited ${given}: ${said}`);
    }
  }
}

/** The books close: nothing open, every ledger entry of ours named by a record, nothing recorded that the ledger lacks. */
export async function expectBooksClose(stack: Stack, atLeast: number): Promise<void> {
  const books = await ourBooks(stack);
  expect([...books.open]).toEqual([]);
  const entries = await ourEntries(stack);
  expect(entries.length).toBeGreaterThanOrEqual(atLeast);
  // Every movement at the provider is accounted for by our records.
  expect(entries.filter((e) => !refsOf(e).some((r) => books.moved.has(r) || books.open.has(r)))).toEqual([]);
  // Nothing we say moved is missing at the provider.
  const atProvider = new Set(entries.flatMap(refsOf));
  expect([...books.moved].filter((r) => !atProvider.has(r))).toEqual([]);
  expect((await ledger(stack)).violations).toEqual([]);
}
