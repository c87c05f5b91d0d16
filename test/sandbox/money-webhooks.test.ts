/** Issue points 8 and 9: the ledger and its violations, webhook signing, redelivery and the fault knobs. */
import { Harness, sleep, waitFor, WEBHOOK_SECRET, type ApiAnswer } from './helpers/harness';
import { hmacSignature } from './helpers/signer';

const h = new Harness();
beforeAll(() => h.start());
afterAll(() => h.stop());
beforeEach(() => h.reset());

const deliveries = async () => (await h.control<{ deliveries: any[] }>('GET', '/webhooks')).body.deliveries;

describe('ledger', () => {
  it('keeps integer cents and reconciles every movement', async () => {
    const card = await h.enabledCard({ initialAmount: 10_000 });
    await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 5_000 } });
    await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 2_000 } });
    await h.control('POST', `/cards/${card.cardId}/transactions`, { amount: 1_234, merchantName: 'Coffee' });
    await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_fail' } });
    await h.control('POST', '/wallet', { amount: 777 });
    const ledger = (await h.control<any>('GET', '/ledger')).body;
    expect(ledger.cards).toEqual([{ cardId: card.cardId, availableBalance: 10_000 + 5_000 - 2_000 - 1_234 }]);
    expect(ledger.totals).toMatchObject({ issued: 10_000, funded: 5_000, withdrawn: 2_000, consumed: 1_234, charged: 300, refunded: 300, credited: 777 });
    expect(ledger.wallet).toBe(100_000_000 + 777 - 10_000 - 5_000 + 2_000);
    expect(ledger.violations).toEqual([]);
    const txn = await waitFor(() => h.receiver.of('CARD_TRANSACTION')[0]);
    expect(txn.event.data).toMatchObject({ cardId: card.cardId, amount: 1_234, currency: 'USD', merchantName: 'Coffee', status: 'APPROVED' });
  });

  it('declines a spend beyond the balance without moving money', async () => {
    const card = await h.enabledCard({ initialAmount: 100 });
    const res = await h.control('POST', `/cards/${card.cardId}/transactions`, { amount: 101, merchantName: 'Shop' });
    expect(res.body).toMatchObject({ status: 'DECLINED', declineReason: 'INSUFFICIENT_BALANCE' });
    expect(await h.ledgerViolations()).toEqual([]);
  });

  it('stays free of violations with every fault switched on, retrying with the same keys', async () => {
    await h.reset({
      faults: { errorRate: 0.3, hangRate: 0.1, hangMs: 150, latencyMs: 5 },
      webhook: { dropRate: 0.2, duplicateRate: 0.3, reorder: true, reorderWindowMs: 20, delayMs: 5 },
    });
    // Retries with the same key until a definitive answer, as a client would after a 500 or timeout.
    const until = async (send: () => Promise<ApiAnswer>): Promise<ApiAnswer> => {
      for (let i = 0; i < 40; i++) {
        const res = await Promise.race([send(), sleep(100).then(() => undefined)]);
        if (res && res.status !== 500 && !(res.status === 409 && res.body.message.startsWith('IDEMPOTENCY_IN_PROGRESS'))) return res;
      }
      throw new Error('no definitive answer');
    };
    const created = await until(() => h.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 50_000, firstName: 'Fa', lastName: 'Ult' }, idempotencyKey: 'f-card' }));
    const cardId = created.body.data.cardId;
    await waitFor(async () => (await h.control<any>('GET', '/ledger')).body.cards.length > 0 && (await until(() => h.api('GET', `/cards/${cardId}`))).body.data.status === 'ENABLE');
    for (let i = 0; i < 12; i++) {
      await until(() => h.api('POST', `/cards/${cardId}/funding`, { body: { amount: 1_000 + i }, idempotencyKey: `f-fund-${i}` }));
      await until(() => h.api('POST', `/cards/${cardId}/withdrawal`, { body: { amount: 500 + i }, idempotencyKey: `f-wd-${i}` }));
    }
    await until(() => h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' }, idempotencyKey: 'f-esim' }));
    await until(() => h.api('POST', '/payouts', { body: { merOrderNo: 'F-1', paymentType: 'BANK_TRANSFER', arriveCurrency: 'GBP', arriveAmount: 7900, payeeFirstName: 'A', payeeLastName: 'B', payeeAccountNo: 'GB0001' }, idempotencyKey: 'f-po' }));
    await sleep(200); // let hung answers and background transitions finish
    const ledger = (await h.control<any>('GET', '/ledger')).body;
    expect(ledger.violations).toEqual([]);
    expect(ledger.totals.funded).toBe(Array.from({ length: 12 }, (_, i) => 1_000 + i).reduce((a, b) => a + b));
    expect(ledger.totals.withdrawn).toBe(Array.from({ length: 12 }, (_, i) => 500 + i).reduce((a, b) => a + b));
    expect(ledger.totals.issued).toBe(50_000);
  });
});

describe('webhooks', () => {
  it('signs deliveries per CONTRACTS §4 over the webhook path and query', async () => {
    await h.enabledCard();
    const d = await waitFor(() => h.receiver.of('CARD_CREATED')[0]);
    expect(d.headers['content-type']).toBe('application/json');
    const expected = hmacSignature(WEBHOOK_SECRET, String(d.headers['x-timestamp']), 'POST', h.receiver.path, String(d.headers['x-nonce']), d.raw);
    expect(d.headers['x-signature']).toBe(expected);
    expect(d.headers['x-api-key']).toBe('key_test');
    expect(d.event).toEqual({ eventId: expect.stringMatching(/^evt_/), eventType: 'CARD_CREATED', createdAt: expect.any(Number), data: expect.objectContaining({ status: 'ENABLE' }) });
  });

  it('redelivers with growing delays until a 2xx, up to 8 attempts', async () => {
    // 250, 500, 1000 ms: with a base of 10 ms (10, 20, 40), a first gap stretched by event-loop delay on a loaded machine
    // outgrew the third (3 in 16 runs, 4 at a time: 56 ms against 43); a base of 100 ms still lost once to a 340 ms stall.
    await h.reset({ webhook: { retryBaseMs: 250 } });
    h.receiver.respond = (_e, attempt) => (attempt < 4 ? 503 : 204);
    await h.control('POST', '/wallet', { amount: 1 }); // no event
    await h.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'Re', lastName: 'Try' } });
    await waitFor(() => h.receiver.of('CARD_CREATED').length === 4);
    const times = h.receiver.of('CARD_CREATED').map((d) => d.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(gaps[2]).toBeGreaterThan(gaps[0]);
    // Each retry waits at least its delay (the receiver notes a delivery before it answers; the delay starts at the answer).
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(250 * 2 ** i - 1));
    const log = (await deliveries()).find((x) => x.eventType === 'CARD_CREATED');
    expect(log).toMatchObject({ status: 'DELIVERED', attempts: expect.any(Array) });
    expect(log.attempts.map((a: any) => a.statusCode)).toEqual([503, 503, 503, 204]);
  });

  it('gives up after 8 attempts and records FAILED', async () => {
    await h.reset({ webhook: { retryBaseMs: 2 } });
    h.receiver.respond = () => 500;
    await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' } });
    await waitFor(async () => (await deliveries()).find((x) => x.eventType === 'ESIM_ISSUED' && x.status === 'FAILED'), 5000);
    expect(h.receiver.of('ESIM_ISSUED')).toHaveLength(8);
  });

  it('treats no answer within the timeout as a failure (timeout configurable for tests)', async () => {
    await h.reset({ webhook: { retryBaseMs: 5, timeoutMs: 50, maxAttempts: 2 } });
    h.receiver.respond = () => 0;
    await h.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'Time', lastName: 'Out' } });
    const log = await waitFor(async () => (await deliveries()).find((x) => x.status === 'FAILED'), 3000);
    expect(log.attempts).toHaveLength(2);
    expect(log.attempts[0]).toMatchObject({ statusCode: null, error: 'timeout' });
  });

  it('drops events (logged as DROPPED) and duplicates them with the same eventId', async () => {
    await h.reset({ webhook: { dropRate: 1 } });
    await h.enabledCard();
    await sleep(50);
    expect(h.receiver.deliveries).toHaveLength(0);
    expect((await deliveries())[0]).toMatchObject({ eventType: 'CARD_CREATED', status: 'DROPPED' });

    await h.reset({ webhook: { duplicateRate: 1 } });
    await h.enabledCard();
    await waitFor(() => h.receiver.of('CARD_CREATED').length === 2);
    const [a, b] = h.receiver.of('CARD_CREATED');
    expect(a.event.eventId).toBe(b.event.eventId);
    expect(a.headers['x-nonce']).not.toBe(b.headers['x-nonce']);
  });

  it('delays and reorders events', async () => {
    // A window wide enough for the three control calls below even on a loaded machine.
    await h.reset({ webhook: { reorder: true, reorderWindowMs: 1000, delayMs: 20 } });
    await h.control('POST', '/wallet', { amount: 1 });
    const card = await h.enabledCard({ initialAmount: 5_000 });
    for (const amount of [1, 2, 3]) await h.control('POST', `/cards/${card.cardId}/transactions`, { amount, merchantName: `m${amount}` });
    await waitFor(() => h.receiver.of('CARD_TRANSACTION').length === 3);
    expect(h.receiver.of('CARD_TRANSACTION').map((d) => d.event.data.amount)).toEqual([3, 2, 1]);
  });

  it('never holds up an API answer, even when the receiver hangs', async () => {
    // The receiver hangs until the sandbox's webhook timeout: an answer held up by its webhook would take the whole
    // timeout. The three answers together must take less than one timeout. (A bound of 500 ms against a 2 s timeout
    // measured the event loop of a loaded machine instead: 563 ms in 3 of 16 runs, 4 at a time.)
    const timeoutMs = 5000;
    await h.reset({ cardProvisioningMs: 0, webhook: { timeoutMs } });
    h.receiver.respond = () => 0;
    const started = Date.now();
    for (let i = 0; i < 3; i++) await h.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'Fast', lastName: 'Answer' } });
    expect(Date.now() - started).toBeLessThan(timeoutMs);
    // ...and the webhooks were still hanging when the last answer came: no answer waited for its webhook to end.
    expect((await deliveries()).filter((d: { eventType: string; status: string }) => d.eventType === 'CARD_CREATED' && d.status !== 'PENDING')).toEqual([]);
    await waitFor(() => h.receiver.of('CARD_CREATED').length === 3);
  });
});
