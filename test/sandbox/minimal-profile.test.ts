/** The sandbox's minimal profile answers only what the spec lists, in plain wording (CONTRACTS §8). */
import { Harness, waitFor } from './helpers/harness';

const h = new Harness();
beforeAll(() => h.start());
afterAll(() => h.stop());
beforeEach(() => h.reset({ profile: 'minimal' }));

describe('the minimal profile', () => {
  it('answers the card, funding and operation with the spec fields only', async () => {
    const created = await h.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace' } });
    expect(Object.keys(created.body.data).sort()).toEqual(
      ['availableBalance', 'brand', 'cardBinId', 'cardNumber', 'cardId', 'cardholderName', 'createdAt', 'name', 'status', 'supportPin', 'totalConsumption', 'updatedAt'].sort(),
    );
    const card = await waitFor(async () => ((await h.api('GET', `/cards/${created.body.data.cardId}`)).body.data.status === 'ENABLE' ? true : undefined));
    expect(card).toBe(true);
    const funded = await h.api('POST', `/cards/${created.body.data.cardId}/funding`, { body: { amount: 500 }, idempotencyKey: 'fid-fund-1' });
    expect(Object.keys(funded.body.data).sort()).toEqual(['message', 'operationId', 'success']);
    const op = await h.api('GET', '/operations/fid-fund-1');
    expect(op.body.data).toEqual({ status: 'COMPLETED' });
  });

  it('gives fileTokens without a prefix', async () => {
    const token = await h.upload('IDENTITY_PROOF');
    expect(token).not.toMatch(/^ftok_/);
  });

  it('words failures in plain text that our classification reads', async () => {
    const card = await h.enabledCard();
    await h.control('POST', '/wallet', { amount: -((await h.control<{ availableBalance: number }>('GET', '/wallet')).body.availableBalance - 10) });
    const res = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 5000 }, idempotencyKey: 'fid-poor' });
    expect(res.body.message).toBe('Insufficient wallet balance');
    const again = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 5000 }, idempotencyKey: 'fid-poor' });
    expect(again).toMatchObject({ status: 409, body: { message: 'The request with this idempotency key already failed; use a new key' } });
  });

  it('spells payouts SUCCESS and sends webhooks without X-API-Key, eventId and createdAt', async () => {
    const merOrderNo = 'fid-po-1';
    const body = { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 1000, payeeFirstName: 'Ada', payeeLastName: 'L', payeeAccountNo: 'GB29NWBK60161331926819' };
    expect((await h.api('POST', '/payouts', { body, idempotencyKey: merOrderNo })).status).toBe(200);
    const done = await waitFor(async () => {
      const p = (await h.api('GET', `/payouts/${merOrderNo}`)).body.data;
      return p.status === 'SUCCESS' ? p : undefined;
    });
    expect(done).not.toHaveProperty('operationId');
    const delivery = await waitFor(() => h.receiver.deliveries.find((d) => d.event.eventType === 'PAYOUT_SUCCESS'));
    expect(delivery.headers['x-api-key']).toBeUndefined();
    expect(delivery.signatureValid).toBe(true);
    expect(Object.keys(delivery.event).sort()).toEqual(['data', 'eventType']);
    expect(delivery.event.data.status).toBe('SUCCESS');
  });

  it('answers a purchase of epln_slow PAID (the spec allows only ISSUED or PAID there)', async () => {
    await h.reset({ profile: 'minimal', esimWaitMs: 100 });
    const res = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_slow' }, idempotencyKey: 'fid-slow' });
    expect(res.body.data.status).toBe('PAID');
    expect(Object.keys(res.body.data).sort()).toEqual(['esimNo', 'iccid', 'operationId', 'orderNo', 'qrCode', 'status']);
  });
});
