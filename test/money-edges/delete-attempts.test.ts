/**
 * Issue 51: a card DELETE moves the card's balance back to the wallet, so it is an attempt recorded
 * before the DELETE like every call that may move money. A delete whose outcome cannot be learned is an
 * open item, closed by the card's status (DELETING or DELETED: moved); a card workflow terminated while
 * its delete is under way leaves the item at once; a plain delete settles its attempt and leaves none.
 * The sandbox's ledger is the proof of what moved.
 */
import { MONEY_ATTEMPT_WORKFLOW_TYPE, type AttemptRecord, type ClosedItem } from '../../src/shared/open-items';
import { entityWorkflowId } from '../../src/shared/ids';
import { listOpenItems, type OpenItemRow } from '../../src/temporal/open-items';
import { issueTestCard } from '../helpers/flows';
import type { Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { cardBalance, faults, ledger, requests, stackOn, typedClient, type Ledger } from './helpers';

jest.setTimeout(120_000);

const DELETE_CARD = 'DELETE /cards/{cardId}';
const GET_CARD = 'GET /cards/{cardId}';

let stack: Stack;
afterEach(async () => stack?.close());

/** The delete attempts of a card (open-item/card/<cardId>/update/<updateId>), whatever became of them. */
async function deleteAttemptIds(cardId: string): Promise<string[]> {
  const ids: string[] = [];
  const prefix = `open-item/${entityWorkflowId('card', cardId)}/update/`;
  for await (const wf of stack.client.workflow.list({ query: `WorkflowType = '${MONEY_ATTEMPT_WORKFLOW_TYPE}' AND TaskQueue = '${stack.taskQueue}'` })) {
    if (wf.workflowId.startsWith(prefix)) ids.push(wf.workflowId);
  }
  return [...new Set(ids)];
}

async function deleteItem(cardId: string): Promise<OpenItemRow | undefined> {
  return (await listOpenItems(stack.client, stack.taskQueue)).find((i) => i.flowKind === 'deleteCard' && i.cardId === cardId);
}

/** The card's balance went back to the wallet once, and the books hold. */
function expectReturnedOnce(before: Ledger, after: Ledger, amount: number): void {
  expect(after.totals.returnedOnClose - before.totals.returnedOnClose).toBe(amount);
  expect(after.wallet - before.wallet).toBe(amount);
  expect(after.violations).toEqual([]);
}

async function enabledCard(balance: number): Promise<string> {
  const card = await issueTestCard(stack, balance);
  const cards = typedClient(stack);
  // The view knows the balance the delete returns: the attempt records it.
  await waitUntil(async () => (await cards.cardState(card.cardId)).card?.availableBalance === balance, 30_000, 'the card workflow shows the balance');
  return card.cardId;
}

test('a DELETE that took effect with its answer, its read-backs and its repeat all lost: the update ends unsure, its attempt is the open item, closed "moved" once the card reads DELETED; the balance is returned once', async () => {
  stack = await stackOn('minimal');
  const cardId = await enabledCard(1000);
  const before = await ledger(stack);
  // The first DELETE takes effect and is answered 500; the activity's read of the card hangs 4 s, then 500.
  await stack.control('PUT', '/config', { faults: { hangMs: 4000 } });
  await faults(stack, { [DELETE_CARD]: { errorRate: 1, afterEffect: true, maxFaults: 1 }, [GET_CARD]: { hangRate: 1, beforeEffect: true } });
  const update = typedClient(stack).delete(cardId);
  update.catch(() => undefined);
  await waitUntil(async () => (await requests(stack, 'deleteCard')) >= 1, 20_000, 'the first DELETE');
  // While that read hangs: the repeat is refused 404, and so is every read of the card: nothing says what the DELETE did.
  await faults(stack, { [DELETE_CARD]: { refuseRate: 1, refuseStatus: 404 }, [GET_CARD]: { refuseRate: 1, refuseStatus: 404 } });
  const failure = await update.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(failure).toBeDefined();
  expect(await requests(stack, 'deleteCard')).toBe(2);

  // The update opened its attempt as the item before it failed: it is listed at once, asking the card. "At once" is within
  // visibility's lag: the list is a visibility query, and the attempt becomes the item by continuing as new (a CI run under
  // load listed nothing on the first look).
  await waitUntil(async () => (await deleteItem(cardId))?.flowKind === 'deleteCard', 10_000, 'the open item listed');
  const row = await deleteItem(cardId);
  expect(row).toMatchObject({ flowKind: 'deleteCard', cardId, open: true });
  expect(row!.refs).toContain(cardId);
  // The card reads again: the item asks it and closes with the provider's word.
  await faults(stack, {});
  const closed = (await stack.client.workflow.getHandle(row!.itemId).result()) as ClosedItem;
  expect(closed).toMatchObject({ verdict: 'moved', by: 'provider', item: { flowKind: 'deleteCard', cardId, amount: 1000, lookup: { resource: 'cardDeletion', ref: cardId } } });
  expect(['DELETING', 'DELETED']).toContain(closed.providerSaid);
  await waitUntil(async () => (await ledger(stack)).cards.find((c) => c.cardId === cardId)?.availableBalance === 0, 20_000, 'the card DELETED at the provider');
  expectReturnedOnce(before, await ledger(stack), 1000);
  expect(await deleteItem(cardId)).toBeUndefined();
});

test('a card workflow terminated while its DELETE is under way: the attempt recorded before the DELETE is an open item at once, closed "moved"', async () => {
  stack = await stackOn('minimal');
  const cardId = await enabledCard(800);
  const before = await ledger(stack);
  // The DELETE takes effect and its answer hangs 8 s.
  await stack.control('PUT', '/config', { faults: { hangMs: 8000 } });
  await faults(stack, { [DELETE_CARD]: { hangRate: 1, afterEffect: true } });
  typedClient(stack)
    .delete(cardId)
    .catch(() => undefined);
  // Recorded before the DELETE; the DELETE took effect (the sandbox counts the request once it answers: 8 s from now).
  await waitUntil(async () => (await deleteAttemptIds(cardId)).length === 1, 20_000, 'the attempt recorded');
  await waitUntil(async () => (await cardBalance(stack, cardId)) === 0, 20_000, 'the card deleted at the provider');
  expect(await requests(stack, 'deleteCard')).toBe(0);
  const [itemId] = await deleteAttemptIds(cardId);
  expect((await stack.client.workflow.getHandle(itemId).describe()).type).toBe(MONEY_ATTEMPT_WORKFLOW_TYPE);
  expect(await deleteItem(cardId)).toBeUndefined();

  await stack.client.workflow.getHandle(entityWorkflowId('card', cardId)).terminate('test: stopped mid-delete');
  // Its watch (the items' 1 s pace on the test stack) finds the card workflow stopped: the item is listed, not left to a reconciliation.
  await waitUntil(async () => (await deleteItem(cardId)) !== undefined, 20_000, 'the open item listed');
  expect(await deleteItem(cardId)).toMatchObject({ itemId, flowKind: 'deleteCard', reason: expect.stringMatching(/^Terminated/) });
  await faults(stack, {});
  expect((await stack.client.workflow.getHandle(itemId).result()) as ClosedItem).toMatchObject({ verdict: 'moved', by: 'provider', item: { amount: 800 } });
  expectReturnedOnce(before, await ledger(stack), 800);
});

test('a plain delete settles its attempt with the provider\'s word: no open item, one record, the balance returned once', async () => {
  stack = await stackOn('contract');
  const cardId = await enabledCard(500);
  const before = await ledger(stack);
  const deleted = await typedClient(stack).delete(cardId);
  expect(['DELETING', 'DELETED']).toContain(deleted.status);
  await waitUntil(async () => (await deleteAttemptIds(cardId)).length === 1, 20_000, 'the attempt listed');
  const attempt = stack.client.workflow.getHandle((await deleteAttemptIds(cardId))[0]);
  expect((await attempt.result()) as AttemptRecord).toMatchObject({ settledBy: 'provider', verdict: 'moved' });
  expect((await attempt.describe()).type).toBe(MONEY_ATTEMPT_WORKFLOW_TYPE);
  expect(await listOpenItems(stack.client, stack.taskQueue)).toEqual([]);
  await waitUntil(async () => (await cardBalance(stack, cardId)) === 0, 20_000, 'the card DELETED at the provider');
  expectReturnedOnce(before, await ledger(stack), 500);
});
