/**
 * The sandbox's divergent profile (CONTRACTS §8): where the spec shows no shape, it answers in
 * another way than ours, so test/fidelity tries our readers against a provider that differs.
 */
import { Harness, waitFor } from './helpers/harness';

const h = new Harness();
beforeAll(() => h.start());
afterAll(() => h.stop());
beforeEach(() => h.reset({ profile: 'divergent' }));

describe('the divergent profile', () => {
  it('answers freeze, unfreeze, contact and DELETE with data: null, and sends CARD_CREATED without a status', async () => {
    const card = await h.enabledCard();
    for (const [method, path, body] of [
      ['POST', 'freeze', undefined],
      ['POST', 'unfreeze', undefined],
      ['POST', 'contact', { email: 'ada@example.com' }],
    ] as const) {
      const res = await h.api(method, `/cards/${card.cardId}/${path}`, body ? { body } : {});
      expect(res).toMatchObject({ status: 200, body: { code: 0, data: null } });
    }
    expect((await h.api('DELETE', `/cards/${card.cardId}`)).body.data).toBeNull();
    const created = await waitFor(() => h.receiver.deliveries.find((d) => d.event.eventType === 'CARD_CREATED'));
    expect(created.event.data).not.toHaveProperty('status');
    expect(created.event.data.cardId).toBe(card.cardId);
  });

  it('words the errors map as an array of {field, message}, and a stale BIN as "BIN not found"', async () => {
    const res = await h.api('POST', '/cards', { body: { cardBinId: 'bin_gone', initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('BIN not found');
    expect(res.body.errors).toEqual([{ field: 'cardBinId', message: expect.any(String) }]);
  });

  it('answers the KYC status query with `status`, an order lookup without orderNo, a recharge with orderNo and status only', async () => {
    // The review must not finish between the submission and its read: the default 500 ms did on a loaded machine (CI: APPROVED for PENDING).
    await h.reset({ profile: 'divergent', kycReviewMs: 60_000 });
    const form = await h.api('POST', '/kyc/cardholders/manual', {
      body: { firstName: 'Ada', lastName: 'Lovelace', idType: 'PASSPORT', idNumber: 'DIV-1', attachments: [await h.upload('IDENTITY_PROOF', 'application/pdf')] },
    });
    const holder = await h.api('GET', `/kyc/cardholders/${form.body.data.id}`);
    expect(holder.body.data).toEqual({ id: form.body.data.id, status: 'PENDING' });

    const bought = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' }, idempotencyKey: 'div-buy' });
    const order = await h.api('GET', `/esim/orders/${bought.body.data.orderNo}`);
    expect(order.body.data).not.toHaveProperty('orderNo');
    expect(order.body.data.status).toEqual(expect.any(String));
    const esimNo = await waitFor(async () => (await h.api('GET', `/esim/orders/${bought.body.data.orderNo}`)).body.data.esimNo ?? undefined);
    const recharged = await h.api('POST', '/esim/recharge', { body: { esimNo }, idempotencyKey: 'div-rc' });
    expect(Object.keys(recharged.body.data).sort()).toEqual(['orderNo', 'status']);
  });

  it('words a balance too low "Amount exceeds available balance", and the payout statuses the spec does not list otherwise', async () => {
    const card = await h.enabledCard();
    const res = await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 10_000_000 }, idempotencyKey: 'div-wd' });
    expect(res.body.message).toBe('Amount exceeds available balance');
    await h.reset({ profile: 'divergent', payoutProcessingMs: 60_000 });
    const body = { merOrderNo: 'div-po', paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 1000, payeeFirstName: 'Ada', payeeLastName: 'L', payeeAccountNo: 'GB29NWBK60161331926819' };
    expect((await h.api('POST', '/payouts', { body, idempotencyKey: 'div-po' })).body.data.status).toBe('SUBMITTED');
  });
});
