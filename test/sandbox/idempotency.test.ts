/** Issue point 5: each idempotent endpoint's same-key, different-body, in-progress and failure behaviour. */
import { Harness, waitFor } from './helpers/harness';

const h = new Harness();
beforeAll(() => h.start());
afterAll(() => h.stop());
beforeEach(() => h.reset());

const ledger = () => h.control<any>('GET', '/ledger').then((r) => r.body);
const wallet = () => h.control<any>('GET', '/wallet').then((r) => r.body.availableBalance as number);

const payoutBody = (merOrderNo: string, extra: Record<string, unknown> = {}) => ({
  merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 9200, payeeFirstName: 'Jan', payeeLastName: 'Novak', payeeAccountNo: 'DE89370400440532013000', ...extra,
});

describe('POST /cards', () => {
  const body = { cardBinId: 'bin_visa_basic', initialAmount: 500, firstName: 'Ann', lastName: 'Lee' };

  it('returns the original card for the same key and body, with no second charge', async () => {
    const a = await h.api('POST', '/cards', { body, idempotencyKey: 'card-1' });
    const b = await h.api('POST', '/cards', { body, idempotencyKey: 'card-1' });
    expect(b.status).toBe(200);
    expect(b.body.data.cardId).toBe(a.body.data.cardId);
    expect(await wallet()).toBe(100_000_000 - 500);
  });

  it('answers 409 for the same key with a different body', async () => {
    await h.api('POST', '/cards', { body, idempotencyKey: 'card-2' });
    const res = await h.api('POST', '/cards', { body: { ...body, initialAmount: 600 }, idempotencyKey: 'card-2' });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/^IDEMPOTENCY_CONFLICT/);
  });

  it('answers 409 IDEMPOTENCY_IN_PROGRESS while the first request runs', async () => {
    await h.reset({ operationProcessingMs: 300 });
    const [a, b] = await Promise.all([
      h.api('POST', '/cards', { body, idempotencyKey: 'card-3' }),
      new Promise((r) => setTimeout(r, 50)).then(() => h.api('POST', '/cards', { body, idempotencyKey: 'card-3' })),
    ]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(409);
    expect(b.body.message).toMatch(/^IDEMPOTENCY_IN_PROGRESS/);
  });

  it('releases the key when the attempt fails', async () => {
    await h.control('POST', '/wallet', { amount: -99_999_900 }); // 100 cents left
    const fail = await h.api('POST', '/cards', { body, idempotencyKey: 'card-4' });
    expect(fail.status).toBe(422);
    expect(fail.body.message).toMatch(/^INSUFFICIENT_FUNDS/);
    await h.control('POST', '/wallet', { amount: 1000 });
    const retry = await h.api('POST', '/cards', { body, idempotencyKey: 'card-4' });
    expect(retry.status).toBe(200);
  });

  it('does not consume the key on a validation failure', async () => {
    expect((await h.api('POST', '/cards', { body: { ...body, initialAmount: 5 }, idempotencyKey: 'card-5' })).status).toBe(400);
    expect((await h.api('POST', '/cards', { body, idempotencyKey: 'card-5' })).status).toBe(200);
  });

  it('validates the key itself', async () => {
    for (const key of ['has space', 'x'.repeat(65), 'bad/char']) {
      const res = await h.api('POST', '/cards', { body, idempotencyKey: key });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual({ 'X-Idempotency-Key': 'must be 1-64 characters of [a-zA-Z0-9_-]' });
    }
  });
});

describe('funding and withdrawal', () => {
  it('funding: same key replays without a second transfer; different body or cardId gives 409; GET /operations reports it', async () => {
    const card = await h.enabledCard();
    const other = await h.enabledCard();
    const a = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 2500 }, idempotencyKey: 'fund-1' });
    const b = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 2500 }, idempotencyKey: 'fund-1' });
    expect(a.body.data).toEqual({ success: true, message: 'funded', operationId: expect.stringMatching(/^oaop_/) });
    expect(b.body).toEqual(a.body);
    expect((await ledger()).totals.funded).toBe(2500);

    const diffBody = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 2600 }, idempotencyKey: 'fund-1' });
    expect(diffBody.status).toBe(409);
    expect(diffBody.body.message).toMatch(/^IDEMPOTENCY_CONFLICT/);
    const diffCard = await h.api('POST', `/cards/${other.cardId}/funding`, { body: { amount: 2500 }, idempotencyKey: 'fund-1' });
    expect(diffCard.status).toBe(409);
    expect(diffCard.body.message).toMatch(/^IDEMPOTENCY_CONFLICT/);

    const op = await h.api('GET', '/operations/fund-1');
    expect(op.body.data).toEqual({
      idempotencyKey: 'fund-1', operationId: a.body.data.operationId, type: 'FUNDING', status: 'COMPLETED', cardId: card.cardId, amount: 2500,
      createdAt: expect.any(Number), updatedAt: expect.any(Number),
    });
    expect((await h.api('GET', '/operations/unknown-key')).status).toBe(404);
  });

  it('funding: PROCESSING and 409 in progress while running; concurrent same-key requests apply once', async () => {
    // 2 s of processing: at 200 ms the first funding completed before the burst arrived on a loaded machine (CI, two
    // jest workers), and the burst was answered the original 200 instead of 409 in progress.
    await h.reset({ operationProcessingMs: 2000 });
    const card = await h.enabledCard();
    const first = h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 1000 }, idempotencyKey: 'fund-2' });
    await new Promise((r) => setTimeout(r, 50));
    expect((await h.api('GET', '/operations/fund-2')).body.data.status).toBe('PROCESSING');
    const burst = await Promise.all(Array.from({ length: 5 }, () => h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 1000 }, idempotencyKey: 'fund-2' })));
    expect(burst.every((r) => r.status === 409 && r.body.message.startsWith('IDEMPOTENCY_IN_PROGRESS'))).toBe(true);
    expect((await first).status).toBe(200);
    expect((await h.api('GET', '/operations/fund-2')).body.data.status).toBe('COMPLETED');
    expect((await ledger()).totals.funded).toBe(1000);
    expect(await h.ledgerViolations()).toEqual([]);
  });

  it('funding: a business failure records FAILED and makes the key terminal', async () => {
    const card = await h.enabledCard();
    await h.control('POST', '/wallet', { amount: -(await wallet()) + 50 });
    const res = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 100 }, idempotencyKey: 'fund-3' });
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/^INSUFFICIENT_FUNDS/);
    expect((await h.api('GET', '/operations/fund-3')).body.data).toMatchObject({ status: 'FAILED', failureReason: 'INSUFFICIENT_FUNDS', type: 'FUNDING' });
    await h.control('POST', '/wallet', { amount: 10_000 });
    const retry = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 100 }, idempotencyKey: 'fund-3' });
    expect(retry.status).toBe(409);
    expect(retry.body.message).toMatch(/^IDEMPOTENCY_KEY_TERMINAL/);
  });

  it('withdrawal: same key replays, different body 409, over-balance is a terminal failure', async () => {
    const card = await h.enabledCard({ initialAmount: 1000 });
    const a = await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 400 }, idempotencyKey: 'wd-1' });
    const b = await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 400 }, idempotencyKey: 'wd-1' });
    expect(b.body).toEqual(a.body);
    expect((await h.api('GET', `/cards/${card.cardId}`)).body.data.availableBalance).toBe(600);
    expect((await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 401 }, idempotencyKey: 'wd-1' })).status).toBe(409);
    const over = await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 601 }, idempotencyKey: 'wd-2' });
    expect(over.status).toBe(422);
    expect((await h.api('GET', '/operations/wd-2')).body.data.status).toBe('FAILED');
    expect((await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 601 }, idempotencyKey: 'wd-2' })).body.message).toMatch(/^IDEMPOTENCY_KEY_TERMINAL/);
  });

  it('withdrawal: in progress gives 409', async () => {
    // 2 s, as for the funding above: the second request must arrive while the first still processes, on a loaded machine too.
    await h.reset({ operationProcessingMs: 2000 });
    const card = await h.enabledCard();
    const [a, b] = await Promise.all([
      h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 100 }, idempotencyKey: 'wd-3' }),
      new Promise((r) => setTimeout(r, 50)).then(() => h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 100 }, idempotencyKey: 'wd-3' })),
    ]);
    expect(a.status).toBe(200);
    expect(b.body.message).toMatch(/^IDEMPOTENCY_IN_PROGRESS/);
  });
});

describe('eSIM purchase', () => {
  it('same key and body returns the same orderNo with no second charge; different body 409', async () => {
    const a = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' }, idempotencyKey: 'buy-1' });
    expect(a.status).toBe(200);
    expect(a.body.data.status).toBe('ISSUED');
    const b = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' }, idempotencyKey: 'buy-1' });
    expect(b.body.data.orderNo).toBe(a.body.data.orderNo);
    expect((await ledger()).totals.charged).toBe(450);
    const c = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_asia_5gb' }, idempotencyKey: 'buy-1' });
    expect(c.status).toBe(409);
    expect(c.body.message).toMatch(/^IDEMPOTENCY_CONFLICT/);
    expect((await h.api('GET', '/operations/buy-1')).body.data).toMatchObject({ type: 'ESIM_PURCHASE', status: 'COMPLETED', orderNo: a.body.data.orderNo });
  });

  it('answers 409 in progress while the purchase waits for issuance', async () => {
    await h.reset({ esimIssueMs: 400, esimWaitMs: 1000 });
    const [a, b] = await Promise.all([
      h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' }, idempotencyKey: 'buy-2' }),
      new Promise((r) => setTimeout(r, 100)).then(() => h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' }, idempotencyKey: 'buy-2' })),
    ]);
    expect(a.body.data.status).toBe('ISSUED');
    expect(b.status).toBe(409);
    expect(b.body.message).toMatch(/^IDEMPOTENCY_IN_PROGRESS/);
  });

  it('a definitively failed purchase makes the key terminal', async () => {
    const a = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_fail' }, idempotencyKey: 'buy-3' });
    expect(a.status).toBe(200);
    // The purchase answer says ISSUED or PAID (spec); the order is refunded by then.
    expect(a.body.data.status).toBe('PAID');
    expect((await h.api('GET', `/esim/orders/${a.body.data.orderNo}`)).body.data.status).toBe('REFUNDED');
    expect((await h.api('GET', '/operations/buy-3')).body.data.status).toBe('FAILED');
    const retry = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_fail' }, idempotencyKey: 'buy-3' });
    expect(retry.status).toBe(409);
    expect(retry.body.message).toMatch(/^IDEMPOTENCY_KEY_TERMINAL/);
    const unavailable = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_soldout' }, idempotencyKey: 'buy-4' });
    expect(unavailable.status).toBe(422);
    expect((await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_soldout' }, idempotencyKey: 'buy-4' })).body.message).toMatch(/^IDEMPOTENCY_KEY_TERMINAL/);
  });
});

describe('payouts', () => {
  it('requires the key', async () => {
    const res = await h.api('POST', '/payouts', { body: payoutBody('PO-0') });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ 'X-Idempotency-Key': 'is required' });
  });

  it('same key returns the original order, FAILED included; different body 409; in progress 409', async () => {
    await h.reset({ operationProcessingMs: 150, payoutProcessingMs: 20 });
    const [a, inProgress] = await Promise.all([
      h.api('POST', '/payouts', { body: payoutBody('PO-1', { payeeAccountNo: 'FAIL0001' }), idempotencyKey: 'po-1' }),
      new Promise((r) => setTimeout(r, 50)).then(() => h.api('POST', '/payouts', { body: payoutBody('PO-1', { payeeAccountNo: 'FAIL0001' }), idempotencyKey: 'po-1' })),
    ]);
    expect(a.body.data).toMatchObject({ merOrderNo: 'PO-1', status: 'PENDING', settleAmount: 10_000, canCancel: true });
    expect(inProgress.body.message).toMatch(/^IDEMPOTENCY_IN_PROGRESS/);
    await waitFor(async () => (await h.api('GET', '/payouts/PO-1')).body.data.status === 'FAILED');
    const replay = await h.api('POST', '/payouts', { body: payoutBody('PO-1', { payeeAccountNo: 'FAIL0001' }), idempotencyKey: 'po-1' });
    expect(replay.status).toBe(200);
    expect(replay.body.data).toMatchObject({ merOrderNo: 'PO-1', status: 'FAILED', failureReason: 'PAYEE_ACCOUNT_REJECTED' });
    const diff = await h.api('POST', '/payouts', { body: payoutBody('PO-1', { arriveAmount: 100 }), idempotencyKey: 'po-1' });
    expect(diff.status).toBe(409);
    expect(diff.body.message).toMatch(/^IDEMPOTENCY_CONFLICT/);
    const reuse = await h.api('POST', '/payouts', { body: payoutBody('PO-1'), idempotencyKey: 'po-other' });
    expect(reuse.status).toBe(400);
    expect(reuse.body.errors).toEqual({ merOrderNo: 'is already used by another payout' });
    expect((await h.api('GET', '/operations/po-1')).body.data).toMatchObject({ type: 'PAYOUT', status: 'FAILED', orderNo: 'PO-1' });
    expect(await h.ledgerViolations()).toEqual([]);
  });
});
