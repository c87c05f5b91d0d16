/** Issue point 10 (control API, magic values, fixtures) and the fault knobs of CONTRACTS §5. */
import { networkInterfaces } from 'node:os';
import { startSandbox } from '../../src/sandbox';
import { Ledger } from '../../src/sandbox/ledger';
import { Harness, kycForm, sleep, waitFor } from './helpers/harness';

const h = new Harness();
/** A non-loopback IPv4 address of this machine, if it has one. */
const external = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal);
beforeAll(() => h.start());
afterAll(() => h.stop());
beforeEach(() => h.reset());

describe('control API', () => {
  it('reports health, resets to the fixtures and merges config partially', async () => {
    expect((await h.control('GET', '/health')).body).toEqual({ ok: true });
    await h.control('POST', '/wallet', { amount: -500 });
    await h.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'A', lastName: 'B' } });
    await h.control('POST', '/reset');
    expect((await h.control('GET', '/wallet')).body).toEqual({ availableBalance: 100_000_000, currency: 'USD' });
    expect((await h.control<any>('GET', '/ledger')).body.cards).toEqual([]);
    const cfg = await h.control<any>('PUT', '/config', { faults: { latencyMs: 1 } });
    expect(cfg.body).toMatchObject({ cardProvisioningMs: 300, kycReviewMs: 500, esimIssueMs: 200, esimWaitMs: 2000, faults: { errorRate: 0, latencyMs: 1, hangRate: 0 }, rateLimit: { windowMs: 60_000, general: 100, sensitive: 70, balance: 70 }, whitelist: [] });
    expect(cfg.body.webhook).toMatchObject({ dropRate: 0, duplicateRate: 0, delayMs: 0, reorder: false, retryBaseMs: 1000 });
  });

  it('refuses bad config with 400 naming the fields, and keeps the old config', async () => {
    const res = await h.control<any>('PUT', '/config', { kycReviewMs: -1, webhook: { dropRate: 2 }, rateLimit: { general: 'x' }, bogus: 1 });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors).sort()).toEqual(['bogus', 'kycReviewMs', 'rateLimit.general', 'webhook.dropRate']);
    expect((await h.control<any>('GET', '/config')).body.kycReviewMs).toBe(30);
  });

  it('credits and debits the wallet', async () => {
    expect((await h.control('POST', '/wallet', { amount: 250 })).body.availableBalance).toBe(100_000_250);
    expect((await h.control('POST', '/wallet', { amount: -1_000_000_000 })).status).toBe(422);
    expect((await h.control('POST', '/wallet', { amount: 1.5 })).status).toBe(400);
  });

  it('decides KYC, finishes provisioning, finishes eSIM orders and moves payouts now', async () => {
    await h.reset({ kycReviewMs: 60_000, cardProvisioningMs: 60_000, esimIssueMs: 60_000, esimWaitMs: 50, payoutProcessingMs: 60_000 });
    const front = await h.upload('IDENTITY_PROOF');
    const att = await h.upload('IDENTITY_PROOF');
    const kyc = await h.api('POST', '/kyc/cardholders/form', { body: kycForm({ idFrontToken: front, attachments: [att] }) });
    const decided = await h.control<any>('POST', `/kyc/${kyc.body.data.id}/decision`, { kycStatus: 'REJECTED', reason: 'blurry photo' });
    expect(decided.body).toMatchObject({ kycStatus: 'REJECTED', reason: 'blurry photo' });
    expect((await h.control('POST', `/kyc/${kyc.body.data.id}/decision`, { kycStatus: 'APPROVED' })).status).toBe(409);
    expect((await h.control('POST', '/kyc/kyc_missing/decision', { kycStatus: 'APPROVED' })).status).toBe(404);

    const card = await h.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 900, firstName: 'A', lastName: 'B' } });
    const failed = await h.control<any>('POST', `/cards/${card.body.data.cardId}/provisioning`, { status: 'FAILED' });
    expect(failed.body.status).toBe('FAILED');
    expect((await h.control('GET', '/wallet')).body.availableBalance).toBe(100_000_000 - 100); // KYC fee only

    const order = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_asia_5gb' } });
    expect(order.body.data.status).toMatch(/PAID|ISSUING/);
    expect((await h.control<any>('POST', `/esim/orders/${order.body.data.orderNo}/outcome`, { status: 'FAILED' })).body.status).toBe('REFUNDED');
    await waitFor(() => h.receiver.of('ESIM_REFUNDED')[0]);

    await h.api('POST', '/payouts', { idempotencyKey: 'ctl-po', body: { merOrderNo: 'CTL-1', paymentType: 'LOCAL_TRANSFER', arriveCurrency: 'SGD', arriveAmount: 1350, payeeFirstName: 'Li', payeeLastName: 'Wei', payeeAccountNo: 'SG123456' } });
    const cancelled = await h.control<any>('POST', '/payouts/CTL-1/status', { status: 'CANCELLED' });
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', canCancel: false });
    expect((await waitFor(() => h.receiver.of('PAYOUT_CANCELLED')[0])).event.data.merOrderNo).toBe('CTL-1');
    expect((await h.control('POST', '/payouts/CTL-1/status', { status: 'COMPLETED' })).status).toBe(409);
    expect((await h.api('GET', '/operations/ctl-po')).body.data.status).toBe('FAILED');
    expect(await h.ledgerViolations()).toEqual([]);
  });

  it('simulates eSIM usage with alerts and depletion', async () => {
    const buy = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' } });
    await h.control('POST', `/esim/esims/${buy.body.data.esimNo}/usage`, { dataUsedMb: 900 });
    await h.control('POST', `/esim/esims/${buy.body.data.esimNo}/usage`, { dataUsedMb: 1024 });
    const alert = await waitFor(() => h.receiver.of('ESIM_USAGE_ALERT')[0]);
    expect(alert.event.data).toMatchObject({ orderNo: buy.body.data.orderNo, esimNo: buy.body.data.esimNo, thresholdPercent: 80 });
    const expired = await waitFor(() => h.receiver.of('ESIM_EXPIRED')[0]);
    expect(expired.event.data).toMatchObject({ reason: 'DEPLETED' });
    expect((await h.api('GET', `/esim/esims/${buy.body.data.esimNo}/usage`)).body.data).toMatchObject({ status: 'DEPLETED', dataRemainingMb: 0 });
  });

  it('keeps the delivery log and per-endpoint statistics (429s included)', async () => {
    await h.reset({ rateLimit: { windowMs: 60_000, general: 1 } });
    await h.api('GET', '/wallet/balance');
    await h.api('GET', '/wallet/balance');
    const stats = await h.control<any>('GET', '/stats');
    expect(stats.body.endpoints.getWalletBalance).toEqual({ requests: 2, byStatus: { 200: 1, 429: 1 } });
  });

  // Skipped, visibly, where there is no non-loopback interface to call from.
  (external ? it : it.skip)('answers the control API and the API only on loopback', async () => {
    if (!external) throw new Error('unreachable: the test is skipped without a non-loopback interface');
    const sb = await startSandbox({ port: 0, host: '0.0.0.0' });
    try {
      const res = await fetch(`http://${external.address}:${sb.port}/sandbox/health`);
      expect(res.status).toBe(403);
      const api = await fetch(`http://${external.address}:${sb.port}/open-api/v1/wallet/balance`);
      expect(((await api.json()) as any).message).toBe('IP_NOT_WHITELISTED');
    } finally {
      await sb.close();
    }
  });
});

describe('faults', () => {
  it('errorRate 1 answers 500 INTERNAL_ERROR without internals; an idempotent retry applies the funding exactly once', async () => {
    const card = await h.enabledCard();
    await h.control('PUT', '/config', { faults: { errorRate: 1 } });
    const attempts = [];
    for (let i = 0; i < 6; i++) attempts.push(await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 700 }, idempotencyKey: 'fault-fund' }));
    expect(attempts.every((a) => a.status === 500 && a.body.message === 'INTERNAL_ERROR' && Object.keys(a.body).length === 2)).toBe(true);
    await h.control('PUT', '/config', { faults: { errorRate: 0 } });
    const ok = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 700 }, idempotencyKey: 'fault-fund' });
    expect(ok.status).toBe(200);
    expect((await h.control<any>('GET', '/ledger')).body.totals.funded).toBe(700);
    expect(await h.ledgerViolations()).toEqual([]);
  });

  it('hangRate 1 holds answers past the client timeout; latencyMs delays answers; the control API is unaffected', async () => {
    await h.control('PUT', '/config', { faults: { hangRate: 1, hangMs: 400 } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await expect(fetch(`${h.url}/sandbox/health`, { signal: controller.signal })).resolves.toBeTruthy();
    const hung = await Promise.race([h.api('GET', '/card-bins'), sleep(200).then(() => 'no answer')]);
    expect(hung).toBe('no answer');
    expect(Date.now() - started).toBeLessThan(400);
    await h.control('PUT', '/config', { faults: { hangRate: 0, latencyMs: 120 } });
    const t = Date.now();
    await h.api('GET', '/card-bins');
    expect(Date.now() - t).toBeGreaterThanOrEqual(110);
  });
});

describe('ledger violation detection', () => {
  it('flags an idempotency key whose side effect was applied twice', () => {
    const ledger = new Ledger(() => 0);
    ledger.transfer({ kind: 'FUNDING', from: 'wallet', to: 'card:c1', amount: 100, ref: 'c1', idempotencyKey: 'k' });
    expect(ledger.violations()).toEqual([]);
    ledger.transfer({ kind: 'FUNDING', from: 'wallet', to: 'card:c1', amount: 100, ref: 'c1', idempotencyKey: 'k' });
    expect(ledger.violations()).toEqual([{ type: 'KEY_APPLIED_TWICE', detail: 'idempotency key k applied 2 times' }]);
  });

  it('refuses a transfer that would overdraw the wallet, moving nothing', () => {
    const ledger = new Ledger(() => 0);
    expect(() => ledger.transfer({ kind: 'FUNDING', from: 'wallet', to: 'card:c1', amount: 100_000_001, ref: 'c1' })).toThrow('insufficient balance');
    expect(ledger.balance('wallet')).toBe(100_000_000);
    expect(ledger.violations()).toEqual([]);
  });
});
