/**
 * The books close (issue 39): every call that may have moved money and could not learn whether it
 * did is an open item (the openItem workflow) until the provider's final word or an operator's
 * settlement, found by any reference the caller or operator holds. The sandbox's ledger is the truth.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { newPinKeyPair, PinOpener, sealPin } from '../../src/codec/card-secrets';
import { createCardActivities } from '../../src/activities/cards';
import { createProviderClient } from '../../src/provider/client';
import type { ClosedItem } from '../../src/shared/open-items';
import { openItemId } from '../../src/shared/open-items';
import { deleteCardUpdate } from '../../src/shared/messages';
import { runCli } from '../../src/starter/run';
import { closedItem, listOpenItems, settleOpenItem } from '../../src/temporal/open-items';
import { clientFailure, issueTestCard, workflowFailure } from '../helpers/flows';
import { allowed, uniqueId, type Stack } from '../helpers/stack';
import { readUntil, waitUntil } from '../helpers/wait';
import { TIMINGS, cardBalance, faults, ledger, requests, stackOn, typedClient } from './helpers';

jest.setTimeout(180_000);

let stack: Stack;
afterEach(async () => stack?.close());

const cli = async (...args: string[]) => {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, () => stack.config, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr, json: () => JSON.parse(stdout.trim()) };
};

type OpenRow = { itemId: string; refs: string[]; open: boolean; lastSaid: string };
const openRefs = async (): Promise<OpenRow[]> => (await cli('open', '--json')).json().result.openItems;
/** The open list once `ready` holds of it (a visibility query: a CI run under load missed a fresh item on one look). */
const openRefsWhen = (ready: (rows: OpenRow[]) => boolean) => readUntil(openRefs, ready);
const listing = (itemId: string) => openRefsWhen((rows) => rows.some((i) => i.itemId === itemId));

async function closedRecord(itemId: string): Promise<ClosedItem> {
  const handle: WorkflowHandle = stack.client.workflow.getHandle(itemId);
  await waitUntil(async () => (await handle.describe()).status.name === 'COMPLETED', 90_000, `${itemId} to close`);
  return (await handle.result()) as ClosedItem;
}

describe('open items', () => {
  test('case 1: a card funding update held PROCESSING past its deadline is an open item; settle by its key waits for the provider; the provider completing it closes it MOVED, and the same call again answers COMPLETED', async () => {
    stack = await stackOn('minimal');
    const card = await issueTestCard(stack, 1000);
    const cards = typedClient(stack);
    await stack.control('PUT', '/config', { operationProcessingMs: 15_000 });
    const idempotencyKey = uniqueId('held').slice(0, 40);
    const unknown = await clientFailure(cards.fundCard({ cardId: card.cardId, amount: 1500, idempotencyKey, timings: { ...TIMINGS, deadlineMs: 4000 } }));
    expect(unknown.type).toBe('OutcomeUnknown');

    // The item is there by the caller's key and by the card update's ID, and lists while open.
    const listed = (await openRefsWhen((rows) => rows.some((i) => i.refs.includes(idempotencyKey)))).find((i) => i.refs.includes(idempotencyKey));
    expect(listed).toBeDefined();
    expect(listed!.refs).toEqual(expect.arrayContaining([`card/${card.cardId}`, unknown.updateId]));
    // While the provider still works on it, settling changes nothing (exit 4: money may still move).
    const early = await cli('settle', idempotencyKey, '--found', 'not-moved', '--json');
    expect(early.code).toBe(4);
    expect(early.json().error.message).toMatch(/still working on it/);

    // The provider completes it minutes after the caller was told OutcomeUnknown: the item asks, and closes with the record.
    const record = await closedRecord(listed!.itemId);
    expect(record).toMatchObject({ verdict: 'moved', by: 'provider', providerSaid: 'COMPLETED', item: { idempotencyKey, cardId: card.cardId, amount: 1500 } });
    expect(await cardBalance(stack, card.cardId)).toBe(2500);
    // The caller's retry under the same key (the same card update) is answered by the record: COMPLETED, nothing moved again.
    const again = await cards.fundCard({ cardId: card.cardId, amount: 1500, idempotencyKey, timings: { ...TIMINGS, deadlineMs: 4000 } });
    expect(again).toMatchObject({ cardId: card.cardId, amount: 1500, status: 'COMPLETED', idempotencyKey });
    expect(await cardBalance(stack, card.cardId)).toBe(2500);
    // Settling by the update ID answers the record it closed with; the item is no longer listed.
    const later = await cli('settle', unknown.updateId!, '--json');
    expect(later.code).toBe(0);
    expect(later.json().result).toMatchObject({ verdict: 'moved', settledBefore: true });
    expect((await openRefsWhen((rows) => !rows.some((i) => i.itemId === listed!.itemId))).find((i) => i.itemId === listed!.itemId)).toBeUndefined();
    expect((await ledger(stack)).violations).toEqual([]);
  });

  test("case 3: a recharge whose answer is lost, on a provider that ignores its key, is never settled NOT MOVED on the provider's silence; the operator's word MOVED is recorded", async () => {
    stack = await stackOn('contract');
    const esim = (await stack.client.workflow.execute('purchaseEsim', { taskQueue: stack.taskQueue, workflowId: uniqueId('buy'), args: [{ planNo: 'epln_global_1gb', timings: TIMINGS }] })) as { esimNo: string };
    const charged = async () => (await ledger(stack)).totals.charged;
    const before = await charged();
    await faults(stack, { 'POST /esim/recharge': { ignoreIdempotencyKey: true, errorRate: 1, afterEffect: true } });
    const workflowId = uniqueId('recharge');
    const lost = await workflowFailure(stack.client.workflow.execute('rechargeEsim', { taskQueue: stack.taskQueue, workflowId, args: [{ esimNo: esim.esimNo, timings: TIMINGS }] }));
    expect(lost.type).toBe('OutcomeUnknown');
    // It says what to do while the item is open; it no longer points at GET /operations, which cannot show a recharge.
    expect(lost.message).toMatch(/open item/);
    expect(lost.message).not.toMatch(/GET \/operations/);
    expect((await charged()) - before).toBeGreaterThan(0);

    const refused = await cli('settle', workflowId, '--json');
    expect(refused.code).toBe(1);
    expect(refused.json().error.message).toMatch(/silence proves nothing/);
    const listed = (await readUntil(() => listOpenItems(stack.client, stack.taskQueue), (rows) => rows.some((r) => r.refs.includes(workflowId)))).find((r) => r.refs.includes(workflowId))!;
    const settled = await cli('settle', workflowId, '--found', 'moved', '--note', 'seen in the provider portal', '--json');
    expect(settled.code).toBe(0);
    expect(settled.json().result).toMatchObject({ verdict: 'moved', by: 'operator', note: 'seen in the provider portal', item: { flowKind: 'rechargeEsim' } });
    // A settle whose list still showed the item open, after it closed (the books-soak race): no update lands, its record is the answer.
    expect(listed.open).toBe(true);
    await expect(settleOpenItem(stack.client, listed, { found: 'not-moved' })).resolves.toBeUndefined();
    expect(await closedItem(stack.client, listed)).toMatchObject({ verdict: 'moved', by: 'operator', note: 'seen in the provider portal' });
    expect((await ledger(stack)).violations).toEqual([]);
  });

  test('case 6: each run of a workflow ID that ends unknown is an item of its own; the settlement of the first does not silence the second', async () => {
    stack = await stackOn('contract');
    const esim = (await stack.client.workflow.execute('purchaseEsim', { taskQueue: stack.taskQueue, workflowId: uniqueId('buy'), args: [{ planNo: 'epln_global_1gb', timings: TIMINGS }] })) as { esimNo: string };
    await faults(stack, { 'POST /esim/recharge': { ignoreIdempotencyKey: true, errorRate: 1, afterEffect: true } });
    const workflowId = uniqueId('recharge');
    const run = () => workflowFailure(stack.client.workflow.execute('rechargeEsim', { taskQueue: stack.taskQueue, workflowId, args: [{ esimNo: esim.esimNo, timings: TIMINGS }] }));
    expect((await run()).type).toBe('OutcomeUnknown');
    const first = (await stack.client.workflow.getHandle(workflowId).describe()).runId;
    expect((await cli('settle', workflowId, '--found', 'not-moved', '--json')).code).toBe(0);

    expect((await run()).type).toBe('OutcomeUnknown');
    const second = (await stack.client.workflow.getHandle(workflowId).describe()).runId;
    const secondItem = openItemId({ workflowId, runId: second });
    const firstItem = openItemId({ workflowId, runId: first });
    const open = await openRefsWhen((rows) => rows.some((i) => i.itemId === secondItem) && !rows.some((i) => i.itemId === firstItem));
    expect(open.map((i) => i.itemId)).toContain(secondItem);
    expect(open.map((i) => i.itemId)).not.toContain(firstItem);
    // The workflow ID now names the second run's open item, not the first run's settlement.
    const again = await cli('settle', workflowId, '--found', 'moved', '--json');
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({ workflowId: openItemId({ workflowId, runId: second }), result: { verdict: 'moved', settledBefore: false } });
  });

  describe('case 5: a deadline after money moved says so, and the item follows what exists', () => {
    const detailsOf = (failure: { details?: unknown[] | null }) => (failure.details?.[0] ?? {}) as Record<string, unknown>;

    test('issueCard whose card is still CREATING: mayHaveTakenEffect with the card; its item closes MOVED once the card is ENABLE', async () => {
      stack = await stackOn('contract', { cardProvisioningMs: 600_000 });
      const workflowId = uniqueId('issue-card');
      const handle = await stack.client.workflow.start('issueCard', {
        taskQueue: stack.taskQueue,
        workflowId,
        args: [{ cardBinId: 'bin_visa_basic', initialAmount: 1200, firstName: 'Late', lastName: 'Card', timings: { ...TIMINGS, deadlineMs: 3000 } }],
      });
      const failure = await workflowFailure(handle.result());
      expect(failure.type).toBe('CardProvisioningTimedOut');
      const { cardId } = detailsOf(failure) as { cardId: string };
      expect(detailsOf(failure)).toMatchObject({ cardId: expect.any(String), mayHaveTakenEffect: true });
      const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
      expect((await listing(itemId)).map((i) => i.itemId)).toContain(itemId);
      await stack.control('POST', `/cards/${cardId}/provisioning`, { status: 'ENABLE' });
      expect(await closedRecord(itemId)).toMatchObject({ verdict: 'moved', by: 'provider', providerSaid: 'ENABLE', item: { cardId, amount: 1200, reason: 'CardProvisioningTimedOut' } });
    });

    test('sendPayout whose payout is still PENDING: mayHaveTakenEffect with the merOrderNo; its item closes MOVED when the payout completes', async () => {
      stack = await stackOn('contract', { payoutProcessingMs: 600_000 });
      const merOrderNo = uniqueId('po').slice(0, 32);
      const workflowId = `send-payout/${merOrderNo}`;
      const handle = await stack.client.workflow.start('sendPayout', {
        taskQueue: stack.taskQueue,
        workflowId,
        args: [{ merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 5000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: { ...TIMINGS, deadlineMs: 3000 } }],
      });
      const failure = await workflowFailure(handle.result());
      expect(failure.type).toBe('PayoutTrackingTimedOut');
      expect(detailsOf(failure)).toMatchObject({ merOrderNo, mayHaveTakenEffect: true });
      const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
      expect((await listing(itemId)).find((i) => i.itemId === itemId)?.refs).toContain(merOrderNo);
      await stack.control('POST', `/payouts/${merOrderNo}/status`, { status: 'COMPLETED' });
      expect(await closedRecord(itemId)).toMatchObject({ verdict: 'moved', by: 'provider', providerSaid: 'COMPLETED', item: { lookup: { resource: 'payout', ref: merOrderNo } } });
    });

    test('purchaseEsim whose order is still PAID: mayHaveTakenEffect with the orderNo; its item closes MOVED when the order is issued', async () => {
      stack = await stackOn('contract', { esimIssueMs: 600_000, esimWaitMs: 100 });
      const workflowId = uniqueId('purchase-esim');
      const handle = await stack.client.workflow.start('purchaseEsim', { taskQueue: stack.taskQueue, workflowId, args: [{ planNo: 'epln_global_1gb', timings: { ...TIMINGS, deadlineMs: 3000 } }] });
      const failure = await workflowFailure(handle.result());
      expect(failure.type).toBe('EsimIssuanceTimedOut');
      const { orderNo } = detailsOf(failure) as { orderNo: string };
      expect(detailsOf(failure)).toMatchObject({ orderNo: expect.stringMatching(/^eord_/), mayHaveTakenEffect: true });
      const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
      await stack.control('POST', `/esim/orders/${orderNo}/outcome`, { status: 'ISSUED' });
      expect(await closedRecord(itemId)).toMatchObject({ verdict: 'moved', by: 'provider', providerSaid: 'ISSUED', item: { lookup: { resource: 'esimOrder', ref: orderNo } } });
    });

    test("sendPayout's timings are validated before any call, naming the field", async () => {
      stack = await stackOn('contract');
      const merOrderNo = uniqueId('po').slice(0, 32);
      const failure = await workflowFailure(
        stack.client.workflow.execute('sendPayout', {
          taskQueue: stack.taskQueue,
          workflowId: `send-payout/${merOrderNo}`,
          args: [{ merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 5000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: { deadlineMs: 90 * 86_400_000, pollMaxIntervalMs: -5 } }],
        }),
      );
      expect(failure.type).toBe('ValidationFailed');
      expect(Object.keys((detailsOf(failure) as { errors: Record<string, string> }).errors).sort()).toEqual(['timings.deadlineMs', 'timings.pollMaxIntervalMs']);
      expect((await stack.control<{ endpoints: Record<string, unknown> }>('GET', '/stats')).endpoints.createPayout).toBeUndefined();
    });
  });

  describe('case 4: a read after the effect that fails never says nothing moved', () => {
    test('the order read after ESIM_ISSUED refused 403: OutcomeUnknown with the order, not the read\'s type; charged once', async () => {
      stack = await stackOn('contract', { esimIssueMs: 1500, esimWaitMs: 100 });
      await faults(stack, { 'GET /esim/orders/{orderNo}': { refuseRate: 1, refuseStatus: 403 } });
      const charged = (await ledger(stack)).totals.charged ?? 0;
      const failure = await workflowFailure(stack.client.workflow.execute('purchaseEsim', { taskQueue: stack.taskQueue, workflowId: uniqueId('purchase-esim'), args: [{ planNo: 'epln_global_1gb', timings: { ...TIMINGS, webhookWaitMs: 10_000 } }] }));
      expect(failure.type).toBe('OutcomeUnknown');
      expect(failure.details?.[0]).toMatchObject({ orderNo: expect.stringMatching(/^eord_/), mayHaveTakenEffect: true });
      expect((await ledger(stack)).totals.charged - charged).toBeGreaterThan(0);
    });

    test("issueCard's restart whose read of the earlier run's card is refused 403: OutcomeUnknown naming the card, no second card", async () => {
      stack = await stackOn('contract', { cardProvisioningMs: 600_000 });
      const workflowId = uniqueId('issue-card');
      const input = { cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'Once', lastName: 'Only', timings: TIMINGS };
      const first = await stack.client.workflow.start('issueCard', { taskQueue: stack.taskQueue, workflowId, args: [input] });
      await waitUntil(async () => typeof (await first.describe()).searchAttributes.CardId?.[0] === 'string', 30_000, 'the first run recorded its card');
      const cardId = String((await first.describe()).searchAttributes.CardId?.[0]);
      await first.terminate('test: lost after the card was created');
      await faults(stack, { 'GET /cards/{cardId}': { refuseRate: 1, refuseStatus: 403 } });
      const second = await stack.client.workflow.start('issueCard', { taskQueue: stack.taskQueue, workflowId, args: [input] });
      const failure = await workflowFailure(second.result());
      expect(failure.type).toBe('OutcomeUnknown');
      expect(failure.details?.[0]).toMatchObject({ cardId, mayHaveTakenEffect: true });
      expect((await ledger(stack)).cards.filter((c) => c.cardId !== cardId)).toHaveLength(0);
      const item = openItemId({ workflowId, runId: second.firstExecutionRunId });
      expect((await listing(item)).map((i) => i.itemId)).toContain(item);
    });

    test('the card read back after a DELETE took effect, refused 403: the update says mayHaveTakenEffect', async () => {
      stack = await stackOn('contract');
      const card = await issueTestCard(stack, 1000);
      await faults(stack, { 'GET /cards/{cardId}': { refuseRate: 1, refuseStatus: 403 } });
      // The raw update, as a service without the typed client sees it: its failure's details say so.
      const failed = await stack.client.workflow.getHandle(`card/${card.cardId}`).executeUpdate(deleteCardUpdate, { args: [allowed(stack, card.cardId, 'delete')] }).then(
        () => undefined,
        (err: { cause?: { message: string; details?: unknown[] } }) => err.cause,
      );
      expect(failed?.message).toMatch(/took effect; reading the card back failed/);
      expect(failed?.details?.[0]).toMatchObject({ cardId: card.cardId, action: 'delete', mayHaveTakenEffect: true });
    });
  });

  test("case 8: issueCard's attempt past its first POST's age (the provider's 24 h key memory, less an hour) posts nothing: OutcomeUnknown with the key", async () => {
    stack = await stackOn('contract');
    const provider = createProviderClient(stack.config.provider);
    try {
      const { createCard } = createCardActivities({ provider, temporal: stack.client, bins: {} as never, pins: {} as never, cardActions: {} as never, openItemMinAskMs: 60_000 });
      // The run's first POST was scheduled 23 h and a minute ago: its re-schedulings after 429s each had a fresh window.
      const env = new MockActivityEnvironment({ workflowExecution: { workflowId: uniqueId('issue-card'), runId: randomUUID() } });
      const idempotencyKey = uniqueId('card').slice(0, 40);
      const input = { cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'Late', lastName: 'Post' };
      const refused = await env.run(createCard, { input, idempotencyKey, postBy: Date.now() - 60_000 }).then(
        () => undefined,
        (err: unknown) => err as ApplicationFailure,
      );
      expect(refused).toMatchObject({ type: 'OutcomeUnknown', nonRetryable: true });
      expect(refused?.details?.[0]).toMatchObject({ idempotencyKey, mayHaveTakenEffect: true });
      expect(await requests(stack, 'createCard')).toBe(0);
      // Within its window the same call posts.
      const card = (await env.run(createCard, { input, idempotencyKey, postBy: Date.now() + 60_000 })) as { cardId: string };
      expect(card.cardId).toEqual(expect.any(String));
      expect(await requests(stack, 'createCard')).toBe(1);
    } finally {
      await provider.close();
    }
  });

  test("issueCard's PIN that no longer opens (its key pair deleted between attempts): refused before any POST on a first attempt; OutcomeUnknown with the key after one that may have posted", async () => {
    stack = await stackOn('contract');
    const provider = createProviderClient(stack.config.provider);
    try {
      const gone = newPinKeyPair();
      const { createCard } = createCardActivities({ provider, temporal: stack.client, bins: {} as never, pins: new PinOpener({ keyId: 'now', privateKey: newPinKeyPair().privateKey }), cardActions: {} as never, openItemMinAskMs: 60_000 });
      const pin = await sealPin('4821', { keyId: 'deleted', publicKey: gone.publicKey }, uniqueId('issue-card'));
      const input = { cardBinId: 'bin_visa_pin', initialAmount: 1000, firstName: 'Pin', lastName: 'Gone', pin };
      const attempt = (n: number) => {
        const env = new MockActivityEnvironment({ attempt: n, workflowExecution: { workflowId: uniqueId('issue-card'), runId: randomUUID() } });
        return env.run(createCard, { input, idempotencyKey: uniqueId('card').slice(0, 40) }).then(() => undefined, (err: unknown) => err as ApplicationFailure);
      };
      const first = await attempt(1);
      expect(first).toMatchObject({ type: 'ValidationFailed', nonRetryable: true });
      expect(JSON.stringify(first?.details)).toMatch(/PIN key id \\"deleted\\"/);
      const retried = await attempt(2);
      expect(retried).toMatchObject({ type: 'OutcomeUnknown', nonRetryable: true });
      expect(retried?.details?.[0]).toMatchObject({ endpoint: 'POST /cards', mayHaveTakenEffect: true });
      expect(JSON.stringify([first, retried])).not.toContain('4821');
      expect(await requests(stack, 'createCard')).toBe(0);
    } finally {
      await provider.close();
    }
  });
});
