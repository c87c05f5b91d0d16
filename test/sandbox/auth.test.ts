/** Issue point 3: the four headers, the CONTRACTS §3 signature, timestamps, nonces, the IP whitelist. */
import { API_KEY, BASE, Harness } from './helpers/harness';

const h = new Harness();
beforeAll(() => h.start());
afterAll(() => h.stop());
beforeEach(() => h.reset());

describe('authentication', () => {
  it('accepts a correctly signed request', async () => {
    const res = await h.api('GET', '/wallet/balance');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ code: 0, message: 'SUCCESS', data: { availableBalance: 100_000_000, currency: 'USD' } });
  });

  it('signs over the exact body bytes and the query string', async () => {
    // Unusual but valid JSON spacing: the signature covers the bytes, not a re-serialisation.
    const raw = '{ "fileName" : "a.png",\n "contentType":"image/png", "type":"IDENTITY_PROOF" }';
    expect((await h.api('POST', '/kyc/presignedUploads', { rawBody: raw })).status).toBe(200);
    expect((await h.api('GET', '/card-bins?refresh=1')).status).toBe(200);
  });

  it.each([
    ['a wrong secret', { sign: { secret: 'secret_wrong' } }],
    ['an unknown API key', { sign: { apiKey: 'key_other' } }],
    ['a timestamp 6 minutes old', { sign: { timestamp: Date.now() - 6 * 60 * 1000 } }],
    ['a timestamp 6 minutes ahead', { sign: { timestamp: Date.now() + 6 * 60 * 1000 } }],
    ['no signature headers', { sign: false as const }],
  ])('answers 403 INVALID_SIGNATURE for %s', async (_label, opts) => {
    const res = await h.api('GET', '/wallet/balance', opts);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 403, message: 'INVALID_SIGNATURE' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  });

  it('refuses a body altered after signing', async () => {
    const { signHeaders } = await import('./helpers/signer');
    const signed = JSON.stringify({ amount: 100 });
    const headers = signHeaders('POST', `${BASE}/cards/crd_x/funding`, signed, { apiKey: API_KEY, secret: 'secret_test' });
    const res = await fetch(`${h.url}${BASE}/cards/crd_x/funding`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 999 }) });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).message).toBe('INVALID_SIGNATURE');
  });

  it('answers 409 NONCE_REUSED to a replayed nonce', async () => {
    const nonce = 'nonce-replayed-0123456789';
    expect((await h.api('GET', '/wallet/balance', { sign: { nonce } })).status).toBe(200);
    const replay = await h.api('GET', '/wallet/balance', { sign: { nonce } });
    expect(replay.status).toBe(409);
    expect(replay.body.message).toMatch(/^NONCE_REUSED/);
  });

  it('requires nonces of at least 16 characters', async () => {
    const res = await h.api('GET', '/wallet/balance', { sign: { nonce: 'short' } });
    expect(res.status).toBe(403);
  });

  it('tells IP_NOT_WHITELISTED apart from INVALID_SIGNATURE', async () => {
    await h.reset({ whitelist: ['203.0.113.7'] });
    const res = await h.api('GET', '/wallet/balance');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 403, message: 'IP_NOT_WHITELISTED' });
    await h.reset({ whitelist: ['127.0.0.1'] });
    expect((await h.api('GET', '/wallet/balance')).status).toBe(200);
  });

  it('never asks for authentication on the control API and never answers 401', async () => {
    expect((await h.control('GET', '/health')).body).toEqual({ ok: true });
    // Control calls are not counted in the stats: make signed and badly-signed API calls so there is something to check.
    const answers = [
      await h.api('GET', '/wallet/balance'),
      await h.api('GET', '/card-bins'),
      await h.api('GET', '/wallet/balance', { sign: { secret: 'secret_wrong' } }),
      await h.api('GET', '/card-bins', { sign: false }),
      await h.api('GET', '/wallet/balance', { sign: { timestamp: Date.now() - 6 * 60 * 1000 } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 403, 403, 403]);
    const stats = await h.control<{ endpoints: Record<string, { requests: number; byStatus: Record<string, number> }> }>('GET', '/stats');
    const endpoints = Object.values(stats.body.endpoints);
    expect(endpoints.length).toBeGreaterThan(0);
    expect(endpoints.reduce((n, s) => n + s.requests, 0)).toBe(answers.length);
    expect(endpoints.reduce((n, s) => n + (s.byStatus['403'] ?? 0), 0)).toBe(3);
    for (const s of endpoints) expect(s.byStatus['401']).toBeUndefined();
  });
});
