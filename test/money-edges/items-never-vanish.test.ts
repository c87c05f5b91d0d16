/**
 * The books close (issue 51): an open item is never lost. Its memo and search attributes outlive its
 * continue-as-new (`settle REF` and `open` read them); an item terminated, cancelled or timed out is
 * listed and paged as ended without a record, and the next reconcile-money run (or `settle`) opens it
 * again under the same ID with the same item; money the provider moved that no record of ours accounts
 * for is an item of its own, opened once however many runs see it.
 */
import { randomUUID } from 'node:crypto';
import { createRegistry, openItemMetrics } from '../../src/observability/metrics';
import { createProviderClient } from '../../src/provider/client';
import { legacyIdempotencyKey } from '../../src/shared/ids';
import { issueTestCard } from '../helpers/flows';
import { type ClosedItem, type OpenItem } from '../../src/shared/open-items';
import { CARD_ID } from '../../src/shared/search-attributes';
import { listOpenItems, startOpenItem } from '../../src/temporal/open-items';
import { reconcileNow } from '../../src/starter/reconciliation';
import { runCli } from '../../src/starter/run';
import { uniqueId, type Stack } from '../helpers/stack';
import { readUntil, waitUntil } from '../helpers/wait';
import { stackOn } from './helpers';

jest.setTimeout(180_000);

let stack: Stack;
beforeAll(async () => {
  stack = await stackOn('contract');
});
afterAll(async () => stack?.close());

const cli = async (...args: string[]) => {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, () => stack.config, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr, json: () => JSON.parse(stdout.trim()) };
};

/** An item under a key the provider never saw: it stays open (silence proves nothing for 15 minutes). */
function itemUnderNewKey(extra: Record<string, unknown> = {}): OpenItem & Record<string, unknown> {
  const idempotencyKey = uniqueId('k').slice(0, 40);
  return {
    owner: { workflowId: uniqueId('fund-card'), runId: randomUUID() },
    flowKind: 'fundCard',
    lookup: { resource: 'operation', ref: idempotencyKey },
    idempotencyKey,
    cardId: uniqueId('card'),
    amount: 700,
    reason: 'Terminated',
    lastSaid: 'UNKNOWN',
    openedAt: Date.now(),
    cadence: { firstAskMs: 200, maxAskIntervalMs: 200 },
    ...extra,
  };
}

test('an item that continued as new keeps its memo and search attributes: `open` lists it with what the provider said, `settle KEY` finds and settles it', async () => {
  const item = itemUnderNewKey({ asksPerRun: 2 });
  const itemId = await startOpenItem(stack.client, stack.taskQueue, item);
  const handle = stack.client.workflow.getHandle(itemId);
  const first = (await handle.describe()).runId;
  await waitUntil(async () => (await handle.describe()).runId !== first, 30_000, 'the item continued as new');
  const now = await handle.describe();
  expect(now.type).toBe('openItem');
  expect(now.memo?.openItem).toMatchObject({ refs: expect.arrayContaining([item.idempotencyKey, item.owner.workflowId]), flowKind: 'fundCard' });
  expect(now.typedSearchAttributes.get(CARD_ID)).toBe(item.cardId);
  // The list is a visibility query: read until it shows the new run (within visibility's lag).
  const openList = () => listOpenItems(stack.client, stack.taskQueue);
  const row = (await readUntil(openList, (rows) => rows.some((i) => i.itemId === itemId && i.runId === now.runId))).find((i) => i.itemId === itemId);
  expect(row).toMatchObject({ flowKind: 'fundCard', lastSaid: 'NO_RECORD', cardId: item.cardId, open: true });
  const settled = await cli('settle', item.idempotencyKey!, '--found', 'not-moved', '--note', 'test', '--json');
  expect(settled.code).toBe(0);
  expect(settled.json().result).toMatchObject({ itemId, verdict: 'not-moved', by: 'operator', settledBefore: false });
});

test('an item terminated is listed and paged as ended without a record; the next reconcile-money run opens it again with the same item, and settle reopens one too', async () => {
  const item = itemUnderNewKey();
  const itemId = await startOpenItem(stack.client, stack.taskQueue, item);
  const handle = stack.client.workflow.getHandle(itemId);
  const first = (await handle.describe()).runId;
  // The CLI refuses without --force, and no longer says the item is lost for good.
  const refused = await cli('terminate', itemId, '--reason', 'test: operator mistake');
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/still listed by open and paged, until the next reconcile-money run or a settlement reopens it/);
  expect((await cli('terminate', itemId, '--reason', 'test: operator mistake', '--force')).code).toBe(0);

  // Listed, and counted by the gauges that page.
  // The list is a visibility query: the terminated run shows there within visibility's lag.
  const rows = await readUntil(async () => (await cli('open', '--json')).json().result.openItems as Array<{ itemId: string; ended?: string }>, (r) => r.some((i) => i.itemId === itemId && i.ended === 'TERMINATED'));
  const listed = rows.find((i) => i.itemId === itemId);
  expect(listed).toMatchObject({ ended: 'TERMINATED', open: false, flowKind: 'fundCard', refs: expect.arrayContaining([item.idempotencyKey]) });
  expect((await cli('open')).stdout).toMatch(/ended: TERMINATED/);
  const registry = createRegistry();
  openItemMetrics(registry, { read: () => listOpenItems(stack.client, stack.taskQueue), kinds: ['fundCard'], onReadFailed: () => undefined, minIntervalMs: 0 });
  expect(await registry.metrics()).toMatch(/open_items\{flow_kind="fundCard"\} [1-9]/);

  // The next reconcile-money run reopens it: a new run of the same ID, carrying the same item.
  const [report] = await reconcileNow({ client: stack.client, taskQueue: stack.taskQueue }, ['money'], { since: '1h' });
  expect(report).toMatchObject({ reopenedItems: 1 });
  const reopened = await handle.describe();
  expect(reopened).toMatchObject({ type: 'openItem', status: { name: 'RUNNING' } });
  expect(reopened.runId).not.toBe(first);
  expect(reopened.memo?.openItem).toMatchObject({ refs: expect.arrayContaining([item.idempotencyKey]), openedAt: item.openedAt });
  const openList = () => listOpenItems(stack.client, stack.taskQueue);
  const reopenedRows = await readUntil(openList, (rows) => rows.some((i) => i.itemId === itemId && i.runId === reopened.runId));
  expect(reopenedRows.filter((i) => i.itemId === itemId)).toEqual([expect.objectContaining({ open: true, runId: reopened.runId })]);
  const [again] = await reconcileNow({ client: stack.client, taskQueue: stack.taskQueue }, ['money'], { since: '1h' });
  expect(again).toMatchObject({ reopenedItems: 0 });

  // Cancelled this time: `settle KEY` reopens it and settles it.
  await handle.cancel();
  await waitUntil(async () => (await handle.describe()).status.name === 'CANCELLED', 20_000, 'the item cancelled');
  const settled = await cli('settle', item.idempotencyKey!, '--found', 'not-moved', '--note', 'checked at the provider', '--json');
  expect(settled.code).toBe(0);
  expect(settled.json().result).toMatchObject({ itemId, verdict: 'not-moved', by: 'operator', settledBefore: false, item: { idempotencyKey: item.idempotencyKey, amount: 700 } });
  expect(((await handle.result()) as ClosedItem).verdict).toBe('not-moved');
  expect((await readUntil(openList, (rows) => !rows.some((i) => i.itemId === itemId))).map((i) => i.itemId)).not.toContain(itemId);
});

test('money the provider moved that our record says did not is an item of its own, opened once, that pages until an operator settles it', async () => {
  const card = await issueTestCard(stack, 1_000);
  // A keyless funding whose earlier version posted under its FNV key; the flow itself then lost.
  const workflowId = uniqueId('fund-card');
  const flow = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, amount: 450 }], startDelay: '1 hour' });
  const provider = createProviderClient(stack.config.provider);
  await provider.fundCard(card.cardId, { amount: 450 }, { idempotencyKey: legacyIdempotencyKey('fund', workflowId) }).finally(() => provider.close());
  await flow.terminate('test: an earlier version posted, then the flow was lost');
  // Its run's item, settled "not moved" by an operator's word (no lookup): our record contradicts the provider.
  const runItem = await startOpenItem(stack.client, stack.taskQueue, { owner: { workflowId, runId: flow.firstExecutionRunId }, flowKind: 'fundCard', reason: 'Terminated', lastSaid: 'UNKNOWN', openedAt: Date.now() });
  expect((await cli('settle', runItem, '--found', 'not-moved', '--note', 'wrong', '--json')).code).toBe(0);

  const reconcile = async () => (await reconcileNow({ client: stack.client, taskQueue: stack.taskQueue }, ['money'], { since: '1h' }))[0];
  const unaccountedOf = async () => (await listOpenItems(stack.client, stack.taskQueue)).filter((i) => i.refs.includes(workflowId) && i.reason.startsWith('moved-unaccounted'));
  const first = await reconcile();
  expect(first.differences.filter((d) => d.workflowId === workflowId)).toEqual([expect.objectContaining({ kind: 'moved-unaccounted', ours: { status: 'settled not-moved' } })]);
  expect(first).toMatchObject({ unaccountedItems: 1 });
  const [item] = await unaccountedOf();
  expect(item).toMatchObject({ flowKind: 'fundCard', lastSaid: 'COMPLETED', open: true, refs: expect.arrayContaining([flow.firstExecutionRunId]) });
  // A second run finds the same item and opens no other.
  await reconcile();
  expect((await unaccountedOf()).map((i) => i.itemId)).toEqual([item.itemId]);
  // Settled by an operator, it is accounted for: the report no longer names the flow.
  const settled = await cli('settle', item.itemId, '--found', 'moved', '--note', 'posted by release 1, ticket OPS-7', '--json');
  expect(settled.code).toBe(0);
  expect(settled.json().result).toMatchObject({ verdict: 'moved', by: 'operator' });
  expect((await reconcile()).differences.filter((d) => d.workflowId === workflowId)).toEqual([]);
});
