/**
 * The books close (issue 39): a mixed run with faults armed (a held PROCESSING past the deadline, an
 * answer cut off with its recall refused 403, a run lost after its effect and restarted under the
 * same ID, a payout cancelled while PENDING, a purchase terminated after its charge), after which
 * every movement in the sandbox's ledger is named by one of our records as moved (a completed flow
 * or card update, a closed item) or is still an open item, and nothing we record as moved is missing
 * from the ledger.
 */
import type { LedgerEntry } from '../../src/sandbox/ledger';
import { reconcileNow } from '../../src/starter/reconciliation';
import { clientFailure, issueTestCard, workflowFailure } from '../helpers/flows';
import { uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { TIMINGS, faults, ledger, loseAfterEffect, stackOn, typedClient } from './helpers';
import { expectBooksClose, settleEveryOpenItem } from './books-helpers';

jest.setTimeout(240_000);

let stack: Stack;
afterAll(async () => stack?.close());

test('every movement in the ledger is one our records account for, or an open item; nothing we say moved is missing from it', async () => {
  stack = await stackOn('contract', { faults: { hangMs: 20_000 } });
  const cards = typedClient(stack);
  const a = await issueTestCard(stack, 5_000);
  const b = await issueTestCard(stack, 5_000);
  const start = (type: string, input: Record<string, unknown>, workflowId = uniqueId(type)) =>
    stack.client.workflow.start(type, { taskQueue: stack.taskQueue, workflowId, args: [{ timings: TIMINGS, ...input }] });

  // 1. A card funding that simply completes, and a withdrawal.
  await cards.fundCard({ cardId: a.cardId, amount: 700, idempotencyKey: uniqueId('plain').slice(0, 40), timings: TIMINGS });
  await cards.withdrawFromCard({ cardId: b.cardId, amount: 300, idempotencyKey: uniqueId('plain-w').slice(0, 40), timings: TIMINGS });

  // 2. A card funding the provider holds PROCESSING past its deadline: OutcomeUnknown, an open item.
  await stack.control('PUT', '/config', { operationProcessingMs: 6_000 });
  const held = await clientFailure(cards.fundCard({ cardId: a.cardId, amount: 900, idempotencyKey: uniqueId('held').slice(0, 40), timings: { ...TIMINGS, deadlineMs: 2_000 } }));
  expect(held.type).toBe('OutcomeUnknown');
  await stack.control('PUT', '/config', { operationProcessingMs: 0 });

  // 3. A standalone funding whose answer is cut off and whose recall is refused 403: OutcomeUnknown.
  await faults(stack, { 'POST /cards/{cardId}/funding': { truncateRate: 1, maxFaults: 1 }, 'GET /operations/{idempotencyKey}': { refuseRate: 1, refuseStatus: 403 } });
  expect((await workflowFailure((await start('fundCard', { cardId: b.cardId, amount: 1_100 })).result())).type).toBe('OutcomeUnknown');
  await faults(stack, {});

  // 4. A withdrawal lost after its effect, then restarted under the same workflow ID.
  await faults(stack, { 'POST /cards/{cardId}/withdrawal': { hangRate: 1, afterEffect: true, maxFaults: 1 } });
  const lostId = uniqueId('withdraw-lost');
  // By the ledger's withdrawals, not the card's balance: step 2's held funding completes on its own 6 s clock and may
  // credit the card meanwhile (a CI run under load: the balance never read `before - 400`, it read `before + 500`).
  const withdrawn = async () => (await ledger(stack)).totals.withdrawn;
  const before = await withdrawn();
  await loseAfterEffect(await start('withdrawFromCard', { cardId: a.cardId, amount: 400 }, lostId), async () => (await withdrawn()) === before + 400);
  await faults(stack, {});
  expect(await (await start('withdrawFromCard', { cardId: a.cardId, amount: 400 }, lostId)).result()).toMatchObject({ status: 'COMPLETED' });

  // 5. A payout cancelled by its caller while the provider pays it out.
  await stack.control('PUT', '/config', { payoutProcessingMs: 600_000 });
  const merOrderNo = uniqueId('po').slice(0, 32);
  const payout = await start('sendPayout', { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 2_000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819' }, `send-payout/${merOrderNo}`);
  await waitUntil(async () => (await stack.control<{ endpoints: Record<string, { requests: number }> }>('GET', '/stats')).endpoints.createPayout?.requests === 1, 30_000, 'the payout created');
  await payout.cancel();
  await payout.result().catch(() => undefined);

  // 6. A purchase terminated after its charge, before the order was issued.
  await stack.control('PUT', '/config', { esimIssueMs: 600_000, esimWaitMs: 100 });
  const charged = (await ledger(stack)).totals.charged ?? 0;
  const purchase = await start('purchaseEsim', { planNo: 'epln_global_1gb' });
  await waitUntil(async () => ((await ledger(stack)).totals.charged ?? 0) > charged, 30_000, 'the purchase charged');
  await purchase.terminate('test: lost after the charge');

  // reconcile-money sees the terminated purchase (and the lost withdrawal's first run) and opens their items.
  await reconcileNow({ client: stack.client, taskQueue: stack.taskQueue }, ['money'], { since: '1h' });
  // The provider finishes what it held: the payout pays out, the order is issued.
  await stack.control('POST', `/payouts/${merOrderNo}/status`, { status: 'COMPLETED' });
  const orders = (await stack.control<{ entries: LedgerEntry[] }>('GET', '/ledger/entries')).entries.filter((e) => e.kind === 'ESIM_CHARGE');
  for (const order of orders) await stack.control('POST', `/esim/orders/${order.ref}/outcome`, { status: 'ISSUED' }).catch(() => undefined);

  // An item opened by a flow asks at its flow's pace and closes by itself; one reconcile-money opened asks
  // at the default pace (minutes), so the operator settles what is still open.
  await settleEveryOpenItem(stack);
  await expectBooksClose(stack, 9);
});
