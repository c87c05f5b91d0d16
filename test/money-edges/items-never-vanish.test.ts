/**
 * The books close (issue 51): an open item is never lost. Its memo and search attributes outlive its
 * continue-as-new (`settle REF` and `open` read them); an item terminated, cancelled or timed out is
 * listed and paged as ended without a record, and the next reconcile-money run (or `settle`) opens it
 * again under the same ID with the same item; money the provider moved that no record of ours accounts
 * for is an item of its own, opened once however many runs see it.
 */
import { randomUUID } from 'node:crypto';
import { openItemId, type ClosedItem, type OpenItem } from '../../src/shared/open-items';
import { CARD_ID } from '../../src/shared/search-attributes';
import { listOpenItems, startOpenItem } from '../../src/temporal/open-items';
import { reconcileNow } from '../../src/starter/reconciliation';
import { runCli } from '../../src/starter/run';
import { uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
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
  const row = (await listOpenItems(stack.client, stack.taskQueue)).find((i) => i.itemId === itemId);
  expect(row).toMatchObject({ flowKind: 'fundCard', lastSaid: 'NO_RECORD', cardId: item.cardId, open: true });
  const settled = await cli('settle', item.idempotencyKey!, '--found', 'not-moved', '--note', 'test', '--json');
  expect(settled.code).toBe(0);
  expect(settled.json().result).toMatchObject({ itemId, verdict: 'not-moved', by: 'operator', settledBefore: false });
});
