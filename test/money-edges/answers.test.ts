/**
 * Money at the edges (issue 20): answers cut off after the effect, the same key with another
 * amount, a movement the provider never settles, and an endpoint the spec does not call
 * idempotent on a provider that ignores its key. The sandbox's ledger is the truth.
 */
import { clientFailure, issueTestCard, workflowFailure } from '../helpers/flows';
import { uniqueId, type Stack } from '../helpers/stack';
import { PROFILES, TIMINGS, cardBalance, faults, ledger, requests, stackOn, typedClient } from './helpers';

describe.each(PROFILES)('money at the edges, on the %s profile', (profile) => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const execute = <T = any>(type: string, input: Record<string, unknown>, workflowId = uniqueId(type)): Promise<T> =>
    stack.client.workflow.execute(type, { taskQueue: stack.taskQueue, workflowId, args: [{ timings: TIMINGS, ...input }] });

  test('a funding answered with half a JSON body after the effect completes, once', async () => {
    stack = await stackOn(profile);
    const card = await issueTestCard(stack, 1000);
    await faults(stack, { 'POST /cards/{cardId}/funding': { truncateRate: 1, maxFaults: 1 } });
    const result = await execute('fundCard', { cardId: card.cardId, amount: 2500 });
    expect(result).toMatchObject({ cardId: card.cardId, amount: 2500, status: 'COMPLETED' });
    expect(await cardBalance(stack, card.cardId)).toBe(3500);
    // The contract profile's record names the card and amount: ours. The minimal one shows only a
    // status, so the same POST under the key confirms it (the original answer, nothing moved again).
    expect(await requests(stack, 'fundCard')).toBe(profile === 'contract' ? 1 : 2);
    expect((await ledger(stack)).violations).toEqual([]);
  });

  test('a card funding re-sent with the same key and another amount fails IdempotencyConflict and moves nothing', async () => {
    stack = await stackOn(profile);
    const card = await issueTestCard(stack, 1000);
    const cards = typedClient(stack);
    const idempotencyKey = uniqueId('order').slice(0, 40);
    const first = await cards.fundCard({ cardId: card.cardId, amount: 2000, idempotencyKey, timings: TIMINGS });
    const again = await cards.fundCard({ cardId: card.cardId, amount: 2000, idempotencyKey, timings: TIMINGS });
    expect(again.operationId).toBe(first.operationId);
    const conflict = await clientFailure(cards.fundCard({ cardId: card.cardId, amount: 2500, idempotencyKey, timings: TIMINGS }));
    expect(conflict.type).toBe('IdempotencyConflict');
    expect(conflict).toMatchObject({ updateId: expect.any(String), idempotencyKey, mayHaveTakenEffect: false });
    const otherKind = await clientFailure(cards.withdrawFromCard({ cardId: card.cardId, amount: 2000, idempotencyKey, timings: TIMINGS }));
    expect(otherKind.type).toBe('IdempotencyConflict');
    expect(await cardBalance(stack, card.cardId)).toBe(3000);
    expect((await ledger(stack)).violations).toEqual([]);
  });

  test('a purchase started again with the same key and another plan while the first runs is refused before any start; the same input joins it', async () => {
    stack = await stackOn(profile);
    const cards = typedClient(stack);
    const idempotencyKey = uniqueId('order').slice(0, 40);
    await stack.control('PUT', '/config', { faults: { latencyMs: 1500 } });
    const first = await cards.startPurchaseEsim({ planNo: 'epln_global_1gb', idempotencyKey, timings: TIMINGS });
    const conflict = await clientFailure(cards.startPurchaseEsim({ planNo: 'epln_asia_5gb', idempotencyKey, timings: TIMINGS }));
    expect(conflict.type).toBe('IdempotencyConflict');
    expect(conflict.workflowId).toBe(first.workflowId);
    const joined = await cards.startPurchaseEsim({ planNo: 'epln_global_1gb', idempotencyKey, timings: TIMINGS });
    expect(joined.runId).toBe(first.runId);
    const order = await joined.result();
    await stack.control('PUT', '/config', { faults: { latencyMs: 0 } });
    // Once it closed, the same call still joins it (its result, nothing charged again), and another is still refused.
    const charged = (await ledger(stack)).totals.charged;
    expect((await cards.purchaseEsim({ planNo: 'epln_global_1gb', idempotencyKey, timings: TIMINGS })).orderNo).toBe(order.orderNo);
    expect((await clientFailure(cards.purchaseEsim({ planNo: 'epln_asia_5gb', idempotencyKey, timings: TIMINGS }))).type).toBe('IdempotencyConflict');
    expect((await ledger(stack)).totals.charged).toBe(charged);
    expect(await requests(stack, 'purchaseEsim')).toBe(1);
  });

  test('a card funding that fails says which card workflow and update to look at; one without a key is refused before anything starts', async () => {
    stack = await stackOn(profile);
    const cards = typedClient(stack);
    const failure = await clientFailure(cards.fundCard({ cardId: 'crd_unknown', amount: 500, idempotencyKey: 'order-unknown-card', timings: TIMINGS }));
    expect(failure.type).toBe('NotFound');
    expect(failure).toMatchObject({ workflowId: 'card/crd_unknown', updateId: 'fund-key-order-unknown-card/500', idempotencyKey: 'order-unknown-card' });
    const keyless = await clientFailure(cards.fundCard({ cardId: 'crd_unknown', amount: 500 } as never));
    expect(keyless.type).toBe('ValidationFailed');
    expect(keyless.fieldErrors).toEqual({ idempotencyKey: 'is required' });
  });

  test('a movement stuck in PROCESSING ends OutcomeUnknown at its deadline, and the card takes a freeze afterwards', async () => {
    stack = await stackOn(profile);
    const card = await issueTestCard(stack, 1000);
    const cards = typedClient(stack);
    // The provider holds the funding PROCESSING for a minute: past the movement's 6 s deadline.
    await stack.control('PUT', '/config', { operationProcessingMs: 60_000 });
    const idempotencyKey = uniqueId('stuck').slice(0, 40);
    const stuck = await clientFailure(cards.fundCard({ cardId: card.cardId, amount: 1500, idempotencyKey, timings: { ...TIMINGS, deadlineMs: 6000 } }));
    expect(stuck.type).toBe('OutcomeUnknown');
    expect(stuck).toMatchObject({ idempotencyKey, mayHaveTakenEffect: true });
    expect(stuck.message).toContain(idempotencyKey);
    const frozen = await cards.freeze(card.cardId);
    expect(frozen.status).toBe('DISABLE');
  }, 60_000);

  test('a recharge whose answer is lost, on a provider that ignores its key, is charged once and ends OutcomeUnknown; a restart charges nothing', async () => {
    stack = await stackOn(profile);
    const esim = await execute<{ esimNo: string }>('purchaseEsim', { planNo: 'epln_global_1gb' });
    const charged = async () => (await ledger(stack)).totals.charged;
    const before = await charged();
    await faults(stack, { 'POST /esim/recharge': { ignoreIdempotencyKey: true, errorRate: 1, afterEffect: true } });
    const workflowId = uniqueId('recharge');
    const lost = await workflowFailure(execute('rechargeEsim', { esimNo: esim.esimNo }, workflowId));
    expect(lost.type).toBe('OutcomeUnknown');
    expect(lost.message).toMatch(/not sent again/);
    const once = (await charged()) - before;
    expect(once).toBeGreaterThan(0);
    expect(await requests(stack, 'rechargeEsim')).toBe(1);

    await faults(stack, { 'POST /esim/recharge': { ignoreIdempotencyKey: true } });
    const restarted = await workflowFailure(execute('rechargeEsim', { esimNo: esim.esimNo }, workflowId));
    expect(restarted.type).toBe('OutcomeUnknown');
    expect((await charged()) - before).toBe(once);
    expect(await requests(stack, 'rechargeEsim')).toBe(1);
    expect((await ledger(stack)).violations).toEqual([]);
  });

  test('a hosted KYC request whose answer was lost after its fee is not sent again by a restart of the same workflow ID', async () => {
    stack = await stackOn(profile, { kycReviewMs: 60_000 });
    await faults(stack, { 'POST /kyc/cardholders/auto': { errorRate: 1, afterEffect: true } });
    const charged = async () => (await ledger(stack)).totals.charged;
    const input = { mode: 'hosted', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };
    const workflowId = uniqueId('kyc-hosted');
    const lost = await workflowFailure(execute('onboardCardholder', input, workflowId));
    expect(lost.type).toBe('SubmissionOutcomeUnknown');
    const fee = await charged();
    expect(fee).toBeGreaterThan(0);
    await faults(stack, {});
    const restarted = await workflowFailure(execute('onboardCardholder', input, workflowId));
    expect(restarted.type).toBe('OutcomeUnknown');
    expect(restarted.message).toMatch(/does not send it again/);
    expect(await charged()).toBe(fee);
    expect(await requests(stack, 'startHostedKyc')).toBe(1);
  });

  test('issueCard whose POST /cards answer is cut off asks again under its key: one card', async () => {
    stack = await stackOn(profile);
    await faults(stack, { 'POST /cards': { truncateRate: 1 } });
    const pending = issueTestCard(stack, 1200);
    await new Promise((r) => setTimeout(r, 2500));
    await faults(stack, {});
    const card = await pending;
    expect(card.status).toBe('ENABLE');
    const { cards, totals } = await ledger(stack);
    expect(cards.map((c) => c.cardId)).toEqual([card.cardId]);
    expect(totals.issued).toBe(1200);
  });
});
