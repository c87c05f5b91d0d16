/**
 * Over real HTTP: every physical attempt is signed afresh, and rate limits are read from
 * the provider's headers so that a retry never comes before the window resets.
 */
import { isProviderError, type ProviderError } from '../../src/provider/errors';
import { randomJitter, retryDelayFor } from '../../src/provider/rate-budget';
import { RecordingSigner, failureOf, sleep, startHarness, type SandboxHarness } from './helpers/sandbox';

let h: SandboxHarness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.control.reset());

describe('fresh signature per physical attempt', () => {
  it('never repeats a nonce, across successes, failures and repeated calls', async () => {
    const signer = new RecordingSigner();
    const client = h.client({ signer });
    for (let i = 0; i < 5; i++) await client.listCardBins();
    // The same logical call repeated after failures, as a Temporal retry would do it.
    await h.control.configure({ faults: { errorRate: 1 } });
    for (let i = 0; i < 3; i++) await expect(client.getWalletBalance()).rejects.toMatchObject({ type: 'ServerError' });
    await h.control.configure({ faults: { errorRate: 0 } });
    await client.getWalletBalance();

    expect(signer.nonces).toHaveLength(9);
    expect(new Set(signer.nonces).size).toBe(9);
    for (const n of signer.nonces) expect(n).toMatch(/^[0-9a-f]{32}$/);
    // The provider saw no replay either.
    expect((await h.control.endpointStats('getWalletBalance')).byStatus).toEqual({ 200: 1, 500: 3 });
  });

  it('reaches the API whether or not PROVIDER_BASE_URL ends in /open-api/v1', async () => {
    for (const suffix of ['', '/', '/open-api/v1', '/open-api/v1/']) {
      const client = h.client({ baseUrl: h.sandbox.url + suffix });
      await expect(client.listCardBins()).resolves.toEqual(expect.arrayContaining([expect.objectContaining({ cardBinId: expect.any(String) })]));
    }
  });

  it('sends a failed call once: no hidden retries in the transport', async () => {
    const client = h.client();
    await h.control.configure({ faults: { errorRate: 1 } });
    await expect(client.listCardBins()).rejects.toMatchObject({ type: 'ServerError' });
    expect((await h.control.endpointStats('listCardBins')).requests).toBe(1);
  });
});

describe('rate limits', () => {
  /** Calls until the provider itself answers 429 (a fresh window may open in between). */
  async function realRateLimit(windowMs: number) {
    await h.control.configure({ rateLimit: { windowMs, general: 2 } });
    // Fail-fast off: this test wants the provider's own 429, not the local refusal.
    const client = h.client({ failFastWhenBudgetSpent: false });
    for (let i = 0; i < 10; i++) {
      const err = await client.getWalletBalance().then(() => undefined, (e: unknown) => e);
      if (isProviderError(err, 'RateLimited')) return { err, client };
      if (err) throw err;
    }
    throw new Error('the sandbox never answered 429');
  }

  it('a 429 carries resetAt from X-RateLimit-Reset (epoch ms) and the wait', async () => {
    const { err, client } = await realRateLimit(60_000);
    expect(err).toMatchObject({ type: 'RateLimited', status: 429, code: 'RATE_LIMITED', retryable: true, mayHaveTakenEffect: false });
    expect(err.resetAt).toBe(client.rateBudget.get('getWalletBalance')?.resetAt);
    // Windows are aligned to multiples of windowMs: the reset is the next boundary.
    expect(err.resetAt! % 60_000).toBe(0);
    expect(err.resetAt!).toBeGreaterThan(Date.now());
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(err.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect((await h.control.endpointStats('getWalletBalance')).byStatus[429]).toBe(1);
  });

  it('retryDelayFor a real 429: the same client refuses locally before the delay, and succeeds after it', async () => {
    const windowMs = 1500;
    await h.control.configure({ rateLimit: { windowMs, general: 2 } });
    // Another client spends the window, so this one's own call meets the provider's 429 and learns the window from it.
    const spender = h.client({ failFastWhenBudgetSpent: false });
    const client = h.client(); // fail fast on: the default
    let err: ProviderError | undefined;
    for (let attempt = 0; attempt < 10 && !err; attempt++) {
      for (let i = 0; ; i++) {
        const spent = await spender.getWalletBalance().then(() => undefined, (e: unknown) => e);
        if (isProviderError(spent, 'RateLimited')) break;
        if (spent) throw spent;
        if (i > 10) throw new Error('the sandbox never answered 429');
      }
      const e = await client.getWalletBalance().then(() => undefined, (e: unknown) => e);
      if (e === undefined) continue; // a fresh window opened in between
      if (!isProviderError(e, 'RateLimited')) throw e;
      // Keep a 429 only with enough of its window left to try (and be refused) before the reset.
      if (e.code === 'RATE_LIMITED' && e.resetAt! - Date.now() >= 300) err = e;
      else await sleep(Math.max(0, e.resetAt! - Date.now()) + 5);
    }
    if (!err) throw new Error('no real 429 with time left in its window');
    expect(err).toMatchObject({ type: 'RateLimited', status: 429, code: 'RATE_LIMITED' });
    expect(client.rateBudget.get('getWalletBalance')).toMatchObject({ remaining: 0, resetAt: err.resetAt });

    const now = Date.now();
    const delay = retryDelayFor(err.resetAt!, now, randomJitter(50));
    const before = await h.control.endpointStats('getWalletBalance');
    const sent = before.requests;

    // Before the delay elapses the same client refuses locally: nothing reaches the sandbox.
    const early = (await failureOf(client.getWalletBalance())) as ProviderError;
    expect(Date.now()).toBeLessThan(now + delay);
    expect(early).toMatchObject({ type: 'RateLimited', code: 'RATE_BUDGET_SPENT', status: undefined, resetAt: err.resetAt });
    expect((await h.control.endpointStats('getWalletBalance')).requests).toBe(sent);

    // After waiting the delay, the same client's call goes through and succeeds.
    await sleep(delay);
    while (Date.now() < now + delay) await sleep(1);
    await expect(client.getWalletBalance()).resolves.toMatchObject({ currency: 'USD' });
    const after = await h.control.endpointStats('getWalletBalance');
    expect(after.requests).toBe(sent + 1);
    expect(after.byStatus[200]).toBe((before.byStatus[200] ?? 0) + 1);
  });

  it('fails fast without spending a request while the known window is spent', async () => {
    await h.control.configure({ rateLimit: { general: 1 } });
    const client = h.client();
    await client.getWalletBalance();
    expect(client.rateBudget.get('getWalletBalance')).toMatchObject({ limit: 1, remaining: 0 });

    const err = (await failureOf(client.getWalletBalance())) as ProviderError;
    expect(err).toMatchObject({ type: 'RateLimited', code: 'RATE_BUDGET_SPENT', status: undefined, resetAt: client.rateBudget.get('getWalletBalance')!.resetAt });
    expect((await h.control.endpointStats('getWalletBalance')).requests).toBe(1);
    // Other endpoints have their own counters and still go through.
    await expect(client.listCardBins()).resolves.toHaveLength(5);
  });
});
