/**
 * Issue 51, case 3: an attempt is recorded before its POST, so an owner stopped while the money may be
 * moving (a card workflow terminated mid-update, a fundCard terminated while its funding is held
 * PROCESSING) leaves an open item at once, not a gap that only a reconciliation, later or never,
 * notices. Before, the card was at +250 with no item and `reconcile --only money` did not name it.
 * The sandbox's ledger is the proof of what moved; the item closes by the provider's word.
 */
import { MONEY_ATTEMPT_WORKFLOW_TYPE, openItemId, type AttemptRecord, type ClosedItem } from '../../src/shared/open-items';
import { entityWorkflowId } from '../../src/shared/ids';
import { listOpenItems } from '../../src/temporal/open-items';
import { sampleKycForm, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { reconcileNow } from '../../src/starter/reconciliation';
import { issueTestCard } from '../helpers/flows';
import { uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { TIMINGS, cardBalance, faults, ledger, stackOn, typedClient } from './helpers';
import { createProviderClient } from '../../src/provider/client';

const key40 = (what: string) => uniqueId(what).slice(0, 40);

jest.setTimeout(120_000);

let stack: Stack;
afterEach(async () => stack?.close());

/** The attempt under `itemId` while it is still only an attempt (its run of type moneyAttempt). */
async function pendingAttempt(itemId: string): Promise<boolean> {
  const info = await stack.client.workflow.getHandle(itemId).describe().catch(() => undefined);
  return info?.type === MONEY_ATTEMPT_WORKFLOW_TYPE && info.status.name === 'RUNNING';
}

test('a card workflow terminated while its funding is held PROCESSING: the attempt is an open item at once, closed "moved" by the provider, the card funded once', async () => {
  stack = await stackOn('minimal', { operationProcessingMs: 6000 });
  const card = await issueTestCard(stack, 1000);
  const client = typedClient(stack);
  const submitted = await client.submitFundCard({ cardId: card.cardId, amount: 250, idempotencyKey: uniqueId('k'), timings: TIMINGS });
  const itemId = openItemId({ workflowId: submitted.workflowId, updateId: submitted.updateId });
  // Recorded before the POST: the attempt exists while the provider holds the funding PROCESSING.
  await waitUntil(() => pendingAttempt(itemId), 20_000, 'the attempt recorded');
  expect((await listOpenItems(stack.client, stack.taskQueue)).map((i) => i.itemId)).not.toContain(itemId);

  await stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId)).terminate('test: stopped mid-update');
  // Its watch (the flow's 1 s pace) finds the card workflow stopped: the item is listed, not left to a reconciliation.
  await waitUntil(async () => (await listOpenItems(stack.client, stack.taskQueue)).some((i) => i.itemId === itemId), 20_000, 'the open item listed');
  const row = (await listOpenItems(stack.client, stack.taskQueue)).find((i) => i.itemId === itemId)!;
  expect(row).toMatchObject({ flowKind: 'fundCard', reason: expect.stringMatching(/^Terminated/), cardId: card.cardId });
  expect(row.refs).toContain(submitted.idempotencyKey);

  // The provider completes the funding; the item asks and closes with its word.
  const closed = (await stack.client.workflow.getHandle(itemId).result()) as ClosedItem;
  expect(closed).toMatchObject({ verdict: 'moved', by: 'provider' });
  expect(await cardBalance(stack, card.cardId)).toBe(1250);
  expect((await ledger(stack)).violations).toEqual([]);
});

test('a fundCard terminated while its funding is held PROCESSING: its attempt becomes the open item at once', async () => {
  stack = await stackOn('minimal', { operationProcessingMs: 6000 });
  const card = await issueTestCard(stack, 1000);
  const workflowId = uniqueId('fund-card');
  const handle = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, amount: 300, timings: TIMINGS }] });
  const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
  await waitUntil(() => pendingAttempt(itemId), 20_000, 'the attempt recorded');
  await handle.terminate('test: the flow is lost while the provider works on its funding');
  await waitUntil(async () => (await listOpenItems(stack.client, stack.taskQueue)).some((i) => i.itemId === itemId), 20_000, 'the open item listed');
  expect((await stack.client.workflow.getHandle(itemId).result()) as ClosedItem).toMatchObject({ verdict: 'moved', by: 'provider' });
  expect(await cardBalance(stack, card.cardId)).toBe(1300);
});

test('a funding that completes settles its attempt with the provider\'s word: no open item, one record', async () => {
  stack = await stackOn('contract');
  const card = await issueTestCard(stack, 1000);
  const workflowId = uniqueId('fund-card');
  const handle = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, amount: 125, timings: TIMINGS }] });
  await handle.result();
  const attempt = stack.client.workflow.getHandle(openItemId({ workflowId, runId: handle.firstExecutionRunId }));
  expect((await attempt.result()) as AttemptRecord).toMatchObject({ settledBy: 'provider', verdict: 'moved', providerSaid: 'COMPLETED' });
  expect((await attempt.describe()).type).toBe(MONEY_ATTEMPT_WORKFLOW_TYPE);
  expect(await listOpenItems(stack.client, stack.taskQueue)).toEqual([]);
  expect(await cardBalance(stack, card.cardId)).toBe(1125);
});

test('an issueCard terminated while its card is CREATING: the attempt recorded before POST /cards is an open item at once, asking about the card it learned of, and closes "moved" once the card is enabled', async () => {
  stack = await stackOn('contract', { cardProvisioningMs: 5_000 });
  const workflowId = uniqueId('issue-card');
  const issued = async () => (await ledger(stack)).totals.issued;
  const before = await issued();
  const handle = await stack.client.workflow.start('issueCard', {
    taskQueue: stack.taskQueue,
    workflowId,
    args: [{ cardBinId: 'bin_visa_basic', initialAmount: 700, firstName: 'Ada', lastName: 'Lovelace', timings: TIMINGS }],
  });
  // The card exists with its initialAmount once POST /cards was answered.
  await waitUntil(async () => (await issued()) - before === 700, 20_000, 'the card created');
  await handle.terminate('test: lost while the card is CREATING');
  const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
  await waitUntil(async () => (await listOpenItems(stack.client, stack.taskQueue)).some((i) => i.itemId === itemId), 20_000, 'the open item listed');
  const row = (await listOpenItems(stack.client, stack.taskQueue)).find((i) => i.itemId === itemId)!;
  expect(row).toMatchObject({ flowKind: 'issueCard', reason: expect.stringMatching(/^Terminated/) });
  // The activity told the attempt the card POST /cards answered: the item asks GET /cards/{cardId}.
  const cardId = (await ledger(stack)).cards.at(-1)!.cardId;
  expect(row.refs).toContain(cardId);
  expect((await stack.client.workflow.getHandle(itemId).result()) as ClosedItem).toMatchObject({ verdict: 'moved', by: 'provider', item: { lookup: { resource: 'card', ref: cardId } } });
});

test('a purchaseEsim terminated while its order is PAID: the attempt is an open item at once', async () => {
  stack = await stackOn('contract', { esimIssueMs: 60_000 });
  const workflowId = uniqueId('purchase-esim');
  const handle = await stack.client.workflow.start('purchaseEsim', { taskQueue: stack.taskQueue, workflowId, args: [{ planNo: 'epln_global_1gb', timings: TIMINGS }] });
  const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
  await waitUntil(() => pendingAttempt(itemId), 20_000, 'the attempt recorded');
  await handle.terminate('test: lost while the order is PAID');
  await waitUntil(async () => (await listOpenItems(stack.client, stack.taskQueue)).some((i) => i.itemId === itemId), 20_000, 'the open item listed');
  expect((await listOpenItems(stack.client, stack.taskQueue)).find((i) => i.itemId === itemId)).toMatchObject({ flowKind: 'purchaseEsim', reason: expect.stringMatching(/^Terminated/) });
});

test('a sendPayout terminated while its payout is PENDING: the attempt is an open item at once, closed "moved" when the provider completes the payout', async () => {
  stack = await stackOn('contract', { payoutProcessingMs: 8000 });
  const merOrderNo = uniqueId('po').slice(0, 32);
  const workflowId = `send-payout/${merOrderNo}`;
  const input = { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 2_000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: TIMINGS };
  const handle = await stack.client.workflow.start('sendPayout', { taskQueue: stack.taskQueue, workflowId, args: [input] });
  const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
  await waitUntil(() => pendingAttempt(itemId), 20_000, 'the attempt recorded');
  await handle.terminate('test: lost while the payout is PENDING');
  await waitUntil(async () => (await listOpenItems(stack.client, stack.taskQueue)).some((i) => i.itemId === itemId), 20_000, 'the open item listed');
  expect((await listOpenItems(stack.client, stack.taskQueue)).find((i) => i.itemId === itemId)?.refs).toContain(merOrderNo);
  expect((await stack.client.workflow.getHandle(itemId).result()) as ClosedItem).toMatchObject({ verdict: 'moved', by: 'provider', providerSaid: 'COMPLETED' });
});

test("an onboarding's submission (which the provider may charge for) settles its attempt as soon as the provider accepts it, while the onboarding waits for its review", async () => {
  stack = await stackOn('contract', { kycReviewMs: 60_000 });
  const workflowId = uniqueId('onboard');
  const handle = await stack.client.workflow.start('onboardCardholder', { taskQueue: stack.taskQueue, workflowId, args: [sampleKycForm(writeSampleDocuments().documents, { timings: TIMINGS })] });
  const attempt = stack.client.workflow.getHandle(openItemId({ workflowId, runId: handle.firstExecutionRunId }));
  await waitUntil(async () => (await attempt.describe()).status.name === 'COMPLETED', 20_000, 'the attempt settled');
  expect((await attempt.result()) as AttemptRecord).toMatchObject({ settledBy: 'provider', verdict: 'moved', providerSaid: 'PENDING' });
  expect((await handle.describe()).status.name).toBe('RUNNING');
  await handle.terminate('test: done');
});

test("an item under a key another request holds: the provider's COMPLETED is not ours until the same POST confirms it, and its 409 closes ours NOT MOVED", async () => {
  // minimal: a record under a key shows only its status, so only the POST under the key tells whose it is.
  stack = await stackOn('minimal');
  const mine = await issueTestCard(stack, 1000);
  const theirs = await issueTestCard(stack, 1000);
  const idempotencyKey = key40('shared');
  // Another request (another card, another amount) took the key first.
  await createProviderClient(stack.config.provider).fundCard(theirs.cardId, { amount: 100 }, { idempotencyKey });
  // Our funding under the same key meets a 409 it cannot read (a proxy's error page): it cannot tell, and ends unsure.
  await faults(stack, { 'POST /cards/{cardId}/funding': { opaqueErrors: true } });
  const workflowId = uniqueId('fund-card');
  const handle = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: mine.cardId, amount: 300, idempotencyKey, timings: { ...TIMINGS, deadlineMs: 3_000 } }] });
  await handle.result().catch(() => undefined);
  await faults(stack, {});
  const closed = (await stack.client.workflow.getHandle(openItemId({ workflowId, runId: handle.firstExecutionRunId })).result()) as ClosedItem;
  expect(closed).toMatchObject({ verdict: 'not-moved', by: 'provider', providerSaid: 'COMPLETED' });
  expect(await cardBalance(stack, mine.cardId)).toBe(1000);
  expect(await cardBalance(stack, theirs.cardId)).toBe(1100);
});

test('an attempt stopped by hand before it became its item does not vanish: listed as ended, reopened as the item by reconcile-money, closed by the provider', async () => {
  stack = await stackOn('minimal', { operationProcessingMs: 4000 });
  const card = await issueTestCard(stack, 1000);
  const submitted = await typedClient(stack).submitFundCard({ cardId: card.cardId, amount: 350, idempotencyKey: key40('forced'), timings: TIMINGS });
  const itemId = openItemId({ workflowId: submitted.workflowId, updateId: submitted.updateId });
  await waitUntil(() => pendingAttempt(itemId), 20_000, 'the attempt recorded');
  await stack.client.workflow.getHandle(itemId).terminate('test: an operator cleaning up');
  await waitUntil(async () => (await listOpenItems(stack.client, stack.taskQueue)).some((i) => i.itemId === itemId && i.ended === 'TERMINATED'), 20_000, 'the ended attempt listed');
  await reconcileNow({ client: stack.client, taskQueue: stack.taskQueue }, ['money'], { since: '1h' });
  expect((await stack.client.workflow.getHandle(itemId).describe()).type).toBe('openItem');
  expect((await stack.client.workflow.getHandle(itemId).result()) as ClosedItem).toMatchObject({ verdict: 'moved', by: 'provider' });
  expect(await cardBalance(stack, card.cardId)).toBe(1350);
});
