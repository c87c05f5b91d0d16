/** Issue point 4: fixed windows per endpoint (path parameters normalised), headers on every answer, 429, reset. */
import { Harness, sleep } from './helpers/harness';

const h = new Harness();
beforeAll(() => h.start());
afterAll(() => h.stop());

describe('rate limits', () => {
  it('counts per endpoint, answers 429 with headers after the limit, and resets with the window', async () => {
    await h.reset({ rateLimit: { windowMs: 1500, general: 3 } });
    // Wait for a fresh window so all calls land in one.
    const first = await h.api('GET', '/cards/crd_a');
    await sleep(Math.max(0, Number(first.headers.get('x-ratelimit-reset')) - Date.now()) + 5);

    const answers = [];
    for (const id of ['crd_a', 'crd_b', 'crd_c']) answers.push(await h.api('GET', `/cards/${id}`));
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404]);
    expect(answers.map((a) => a.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0']);
    const reset = Number(answers[0].headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now());
    expect(reset - Date.now()).toBeLessThanOrEqual(1500);

    const limited = await h.api('GET', '/cards/crd_d');
    expect(limited.status).toBe(429);
    expect(limited.body.message).toMatch(/^RATE_LIMITED: rate limit exceeded, retry in \d+ seconds$/);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('x-ratelimit-reset'))).toBe(reset);

    // Another endpoint has its own counter.
    expect((await h.api('GET', '/wallet/balance')).status).toBe(200);

    await sleep(reset - Date.now() + 10);
    const after = await h.api('GET', '/cards/crd_a');
    expect(after.status).toBe(404);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('gives the sensitive endpoint and funding / withdrawal their own limits (70 by default)', async () => {
    await h.reset();
    const card = await h.enabledCard();
    const sensitive = await h.api('GET', `/cards/${card.cardId}/sensitive`);
    expect(sensitive.headers.get('x-ratelimit-limit')).toBe('70');
    const fund = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 100 } });
    const withdraw = await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 10 } });
    expect(fund.headers.get('x-ratelimit-limit')).toBe('70');
    expect(withdraw.headers.get('x-ratelimit-limit')).toBe('70');
    // Separate counters: each has used one.
    expect(fund.headers.get('x-ratelimit-remaining')).toBe('69');
    expect(withdraw.headers.get('x-ratelimit-remaining')).toBe('69');
    expect((await h.api('GET', '/card-bins')).headers.get('x-ratelimit-limit')).toBe('100');
  });

  it('limits funding separately from withdrawal', async () => {
    await h.reset({ rateLimit: { windowMs: 60_000, balance: 2 } });
    const card = await h.enabledCard();
    await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 100 } });
    await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 100 } });
    expect((await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 100 } })).status).toBe(429);
    expect((await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 10 } })).status).toBe(200);
  });

  it('puts the headers on error answers too (404, 405, 403, 400)', async () => {
    await h.reset();
    for (const res of [
      await h.api('GET', '/no-such-endpoint'),
      await h.api('PUT', '/cards'),
      await h.api('GET', '/wallet/balance', { sign: { secret: 'secret_bad' } }),
      await h.api('POST', '/cards', { body: {} }),
    ]) {
      expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d{13}$/);
    }
  });

  it('does not rate-limit the control API', async () => {
    await h.reset({ rateLimit: { windowMs: 60_000, general: 1 } });
    for (let i = 0; i < 5; i++) expect((await h.control('GET', '/wallet')).status).toBe(200);
  });
});
