/**
 * Issue 51: the payout recall (GET /payouts/{merOrderNo} before a POST) compares the fields the
 * provider shows with ours, and a contradiction ends IdempotencyConflict, which says nothing of ours
 * moved. How the provider presents an account number must never be one: a mask of letters
 * (`XXXX…6819`), a mask as long as the number, or one that shows no digit at all. The createPayout
 * activity runs in a mock activity context against the sandbox over HTTP, through a proxy that
 * masks the account number in the payout's read as such a provider would. No Temporal server.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { createPayoutActivities, sameAccountNo, samePayoutField } from '../../src/activities/payouts';
import { ProviderClient } from '../../src/provider/client';
import { hmac, startHarness, type SandboxHarness } from './helpers/sandbox';

const ACCOUNT = 'GB29NWBK60161331926819';

/** A proxy to the sandbox that shows the payout's account number as `mask` gives it. */
async function maskingProxy(target: string, mask: (account: string) => string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body });
      let text = await upstream.text();
      if (req.method === 'GET' && /\/payouts\//.test(req.url ?? '') && upstream.ok) {
        const json = JSON.parse(text) as { data?: { payeeAccountNo?: string } };
        if (json.data?.payeeAccountNo) json.data.payeeAccountNo = mask(json.data.payeeAccountNo);
        text = JSON.stringify(json);
      }
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('payout recall: an account number masked by the provider is ours when its visible digits are', () => {
  let harness: SandboxHarness;
  let proxy: { url: string; close(): Promise<void> } | undefined;
  let provider: ProviderClient | undefined;
  beforeEach(async () => {
    harness = await startHarness();
  });
  afterEach(async () => {
    await provider?.close();
    await proxy?.close();
    await harness.close();
  });

  /** The first attempt posts; a later one (sentBefore) recalls through the masking proxy. */
  async function postThenRecall(mask: (account: string) => string): Promise<unknown> {
    proxy = await maskingProxy(harness.sandbox.url, mask);
    provider = new ProviderClient({ baseUrl: proxy.url, signer: hmac(), timeoutMs: 5000 });
    const { createPayout } = createPayoutActivities({ provider } as Parameters<typeof createPayoutActivities>[0]);
    const merOrderNo = `po-masked-${Date.now()}`;
    const idempotencyKey = `payout_${merOrderNo}`;
    const request = { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 5000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: ACCOUNT };
    const first = await new MockActivityEnvironment().run(createPayout, { request, idempotencyKey });
    expect(first).toMatchObject({ merOrderNo });
    return new MockActivityEnvironment().run(createPayout, { request, idempotencyKey, sentBefore: true }).catch((err: unknown) => err);
  }

  const posts = async () => (await harness.control.endpointStats('createPayout')).requests;

  test.each([
    ['letters and an ellipsis', (a: string) => `XXXX…${a.slice(-4)}`],
    ['letters as long as the number', (a: string) => `${'X'.repeat(a.length - 4)}${a.slice(-4)}`],
    ['lower-case letters and spaces', (a: string) => `xxxx xxxx xxxx ${a.slice(-4)}`],
    ['the country and check digits, then letters', (a: string) => `${a.slice(0, 4)}XXXXXXXXXXXXXX${a.slice(-4)}`],
    ['no digit at all', () => '******************'],
  ])('shown with %s: the payout found is the answer, posted once', async (_, mask) => {
    const recalled = await postThenRecall(mask);
    expect(recalled).not.toBeInstanceOf(Error);
    expect(recalled).toMatchObject({ arriveAmount: 5000, payeeAccountNo: mask(ACCOUNT) });
    expect(await posts()).toBe(1);
  });

  test('visible digits that are not ours: IdempotencyConflict, nothing posted again', async () => {
    const recalled = await postThenRecall(() => 'XXXX…6818');
    expect(recalled).toBeInstanceOf(ApplicationFailure);
    expect(recalled).toMatchObject({ type: 'IdempotencyConflict' });
    expect(await posts()).toBe(1);
  });
});

describe('samePayoutField', () => {
  test.each([
    ['XXXX…6819', true],
    ['XXXXXXXXXXXXXXXXXX6819', true],
    ['****6819', true],
    ['GB29…6819', true],
    ['gb29 nwbk 6016 1331 9268 19', true],
    ['••••', true],
    ['GB29NWBK60161331926819', true],
    ['XXXX…6818', false],
    ['GB28…6819', false],
    ['60161331926818', false],
    ['GB29NWBK60161331926818', false],
  ])('account shown %s against GB29NWBK60161331926819: same %s', (shown, same) => {
    expect(sameAccountNo(shown, ACCOUNT)).toBe(same);
    expect(samePayoutField('payeeAccountNo', shown, ACCOUNT)).toBe(same);
  });

  test('a currency compares as a code without case; one shown otherwise shows nothing to compare', () => {
    expect(samePayoutField('arriveCurrency', 'eur', 'EUR')).toBe(true);
    expect(samePayoutField('arriveCurrency', '€', 'EUR')).toBe(true);
    expect(samePayoutField('arriveCurrency', 'USD', 'EUR')).toBe(false);
    expect(samePayoutField('arriveAmount', 5000, 5000)).toBe(true);
    expect(samePayoutField('arriveAmount', 5001, 5000)).toBe(false);
  });
});
