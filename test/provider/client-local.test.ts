/**
 * What the sandbox cannot show, against a tiny local HTTP server: a 2xx the schema does
 * not accept, a proxy's non-JSON page, and the exact headers of the presigned PUT.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderClient, createProviderClient } from '../../src/provider/client';
import { HmacSha256Scheme } from '../../src/provider/signing';
import { uploadDocument } from '../../src/provider/uploads';
import { CALLER_URL_RULE } from '../../src/provider-api/rules';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Answers of shapes the spec does not show, worded as another provider might (issue 21). */
const UNSHOWN: Record<string, unknown> = {
  'POST /open-api/v1/cards/crd_ok/freeze': { code: 0, message: 'SUCCESS', data: null },
  'POST /open-api/v1/cards/crd_ok/unfreeze': { code: 0, message: 'SUCCESS', data: { success: true } },
  'POST /open-api/v1/cards/crd_ok/pin': { code: 0, message: 'SUCCESS', data: 'ok' },
  'POST /open-api/v1/cards/crd_ok/contact': { code: 0, message: 'SUCCESS', data: { cardId: 'crd_ok' } },
  'DELETE /open-api/v1/cards/crd_ok': { code: 0, message: 'SUCCESS' },
  'GET /open-api/v1/kyc/cardholders/kyc_status': { code: 0, message: 'SUCCESS', data: { status: 'APPROVED' } },
  'GET /open-api/v1/kyc/cardholders/kyc_none': { code: 0, message: 'SUCCESS', data: { id: 'kyc_none', reviewedBy: 'ops' } },
  'GET /open-api/v1/esim/orders/eord_bare': { code: 0, message: 'SUCCESS', data: { status: 'ISSUED' } },
  'POST /open-api/v1/esim/recharge': { code: 0, message: 'SUCCESS', data: { orderNo: 'eord_rc' } },
  'GET /open-api/v1/operations/op_bare': { code: 0, message: 'SUCCESS', data: { status: 'COMPLETED' } },
  'GET /open-api/v1/esim/plans': { code: 0, message: 'SUCCESS', data: { total: 1, plans: [{ planNo: 'epln_x', price: '4.50' }] } },
  'GET /open-api/v1/wallet/balance': { code: 0, message: 'SUCCESS', data: { balance: '12.00' } },
  'POST /open-api/v1/kyc/cardholders/auto': { code: 0, message: 'SUCCESS', data: { id: 'kyc_hosted' } },
  'POST /open-api/v1/payouts': { code: 0, message: 'SUCCESS', data: { status: 'ACCEPTED' } },
};

const SECRET = 'secret_local_do_not_leak';
const PAN = '4111111111111111';
let server: http.Server;
let base: string;
let seen: Seen[] = [];
let putAnswers: number[] = [];

function envelope(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

beforeAll(async () => {
  let uploads = 0;
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const url = req.url!;
      if (url === '/open-api/v1/cards/crd_204/freeze') return res.writeHead(204).end();
      if (url === '/open-api/v1/cards/crd_refused/freeze') return envelope(res, 200, { code: 422, message: 'Card is not active' });
      const unshown = UNSHOWN[`${req.method} ${url}`];
      if (unshown !== undefined) return envelope(res, 200, unshown);
      if (url === '/open-api/v1/cards/crd_bad') return envelope(res, 200, { code: 0, message: 'SUCCESS', data: { cardId: 7 } });
      if (url === '/open-api/v1/cards/crd_bad/sensitive') {
        // Field names are not shown by the spec, so any object is read; a list is not an object.
        return envelope(res, 200, { code: 0, message: 'SUCCESS', data: [{ cardId: 'crd_bad', cardNumber: PAN, cvv: 'x12', expiryMonth: 13, expiryYear: 2030 }] });
      }
      if (url === '/open-api/v1/card-bins') return res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
      if (url === '/open-api/v1/kyc/presignedUploads') {
        uploads++;
        return envelope(res, 200, { code: 0, message: 'SUCCESS', data: { uploadUrl: `${base}/bucket/obj${uploads}?sig=abc`, fileToken: `ftok_${uploads}`, expiresIn: 600 } });
      }
      if (url.startsWith('/bucket/')) return res.writeHead(putAnswers.shift() ?? 200).end('<Error>AccessDenied</Error>');
      return envelope(res, 404, { code: 404, message: 'NOT_FOUND' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
  putAnswers = [];
});

function client(): ProviderClient {
  return createProviderClient({ baseUrl: base, apiKey: 'key_local', apiSecret: SECRET, timeoutMs: 2000 });
}

describe('answers the schema does not accept', () => {
  it('a 2xx with data of the wrong shape fails as InvalidResponse naming the fields; a GET changed nothing, so it may be retried', async () => {
    const c = client();
    await expect(c.getCard('crd_bad')).rejects.toMatchObject({ type: 'InvalidResponse', status: 200, retryable: true, mayHaveTakenEffect: false, errors: expect.objectContaining({ cardId: expect.any(String) }) });
    await c.close();
  });

  it('never carries the card data of a rejected sensitive answer', async () => {
    const c = client();
    const err = await c.getSensitiveCard('crd_bad').catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'InvalidResponse', errors: expect.objectContaining({ data: expect.any(String) }) });
    const dump = `${String(err)} ${JSON.stringify(err)} ${(err as Error).stack}`;
    expect(dump).not.toContain(PAN);
    expect(dump).not.toContain('x12');
    await c.close();
  });

  it('a proxy page (502, HTML) maps by status to ServerError', async () => {
    const c = client();
    await expect(c.listCardBins()).rejects.toMatchObject({ type: 'ServerError', status: 502, mayHaveTakenEffect: true, retryable: true });
    await c.close();
  });
});

describe('the secret stays in the signer', () => {
  it('is in no serialisation or inspection of the client', async () => {
    const c = client();
    const { inspect } = await import('node:util');
    expect(JSON.stringify(c)).not.toContain(SECRET);
    expect(inspect(c, { depth: 10, showHidden: true })).not.toContain(SECRET);
    await c.close();
  });

  it('a missing required idempotency key and a malformed one fail before any request', async () => {
    const c = client();
    const payout = { merOrderNo: 'po_1', paymentType: 'SWIFT' as const, arriveCurrency: 'EUR', arriveAmount: 1000, payeeFirstName: 'Ada', payeeLastName: 'Byron', payeeAccountNo: 'DE1234567890' };
    await expect(c.createPayout(payout, { idempotencyKey: undefined as unknown as string })).rejects.toMatchObject({ type: 'ValidationFailed', errors: { 'X-Idempotency-Key': 'is required' } });
    await expect(c.fundCard('crd_1', { amount: 100 }, { idempotencyKey: 'has spaces' })).rejects.toMatchObject({ type: 'ValidationFailed', errors: { 'X-Idempotency-Key': expect.any(String) } });
    await expect(c.fundCard('crd_1', { amount: 5 })).rejects.toMatchObject({ type: 'ValidationFailed', errors: { amount: expect.any(String) } });
    expect(seen).toHaveLength(0);
    await c.close();
  });
});

describe('presigned PUT', () => {
  const doc = { fileName: 'passport.png', contentType: 'image/png' as const, type: 'IDENTITY_PROOF' as const, bytes: Buffer.from('png-bytes') };

  it('sends exactly the Content-Type and none of the signing headers', async () => {
    const c = new ProviderClient({ baseUrl: base, signer: new HmacSha256Scheme({ apiKey: 'key_local', secret: SECRET }), timeoutMs: 2000 });
    expect(await uploadDocument(c, doc)).toBe('ftok_1');
    const put = seen.find((s) => s.method === 'PUT')!;
    expect(put.headers['content-type']).toBe('image/png');
    for (const h of ['x-api-key', 'x-timestamp', 'x-nonce', 'x-signature', 'authorization', 'x-idempotency-key']) expect(put.headers[h]).toBeUndefined();
    await c.close();
  });

  it('treats an object store 403 as an expired URL: one new URL, one more PUT', async () => {
    const c = client();
    putAnswers = [403, 200];
    const token = await uploadDocument(c, doc);
    expect(seen.map((s) => `${s.method} ${s.url.split('?')[0]}`)).toEqual([
      'POST /open-api/v1/kyc/presignedUploads',
      'PUT /bucket/obj2',
      'POST /open-api/v1/kyc/presignedUploads',
      'PUT /bucket/obj3',
    ]);
    expect(token).toBe('ftok_3');
    await c.close();
  });

  it('gives up after the second expired URL', async () => {
    const c = client();
    putAnswers = [404, 404];
    await expect(uploadDocument(c, doc)).rejects.toMatchObject({ type: 'UploadUrlExpired' });
    expect(seen.filter((s) => s.method === 'PUT')).toHaveLength(2);
    await c.close();
  });
});

describe('answers whose shape the spec does not show (issue 21)', () => {
  it('a freeze answered data: null, an unfreeze answered { success: true }, a PIN answered "ok", a delete without data: each is success', async () => {
    const c = client();
    await expect(c.freezeCard('crd_ok')).resolves.toBeUndefined();
    await expect(c.unfreezeCard('crd_ok')).resolves.toBeUndefined();
    await expect(c.updatePin('crd_ok', { pin: '4821' })).resolves.toBeUndefined();
    await expect(c.updateContact('crd_ok', { email: 'a@example.com' })).resolves.toBeUndefined();
    await expect(c.deleteCard('crd_ok')).resolves.toBeUndefined();
    // A 204 without a body is a 2xx too; a 2xx carrying a failure envelope is still the failure.
    await expect(c.freezeCard('crd_204')).resolves.toBeUndefined();
    await expect(c.freezeCard('crd_refused')).rejects.toMatchObject({ type: 'InvalidState' });
    await c.close();
  });

  it('a KYC status query answered with `status` instead of `kycStatus` is read; one with no status at all is a retryable InvalidResponse', async () => {
    const c = client();
    expect((await c.getCardholder('kyc_status')).kycStatus).toBe('APPROVED');
    await expect(c.getCardholder('kyc_none')).rejects.toMatchObject({ type: 'InvalidResponse', endpoint: 'getKycCardholder', retryable: true, mayHaveTakenEffect: false });
    await c.close();
  });

  it('an eSIM order lookup without orderNo is read, the order number being the one asked for', async () => {
    const c = client();
    expect(await c.getEsimOrder('eord_bare')).toMatchObject({ orderNo: 'eord_bare', status: 'ISSUED' });
    await c.close();
  });

  it('a recharge answered with its orderNo only reads PAID (the spec: an order is PAID once charged), so the flow waits for its outcome', async () => {
    const c = client();
    expect(await c.rechargeEsim({ esimNo: 'esim_1' }, { idempotencyKey: 'rc-1' })).toMatchObject({ orderNo: 'eord_rc', status: 'PAID' });
    await c.close();
  });

  it('operations with status only, a wallet and a plan catalog of other shapes, are read', async () => {
    const c = client();
    expect(await c.getOperation('op_bare')).toMatchObject({ status: 'COMPLETED' });
    expect(await c.getWalletBalance()).toMatchObject({ balance: '12.00' });
    // The catalog wrapped in an object is the list it holds.
    expect(await c.listEsimPlans()).toEqual([{ planNo: 'epln_x', price: '4.50' }]);
    await c.close();
  });
});

describe('fields we do not model, through `extra` (issue 21)', () => {
  const payout = { merOrderNo: 'po_x', paymentType: 'SWIFT', arriveCurrency: 'EUR', arriveAmount: 1000, payeeFirstName: 'Ada', payeeLastName: 'Byron', payeeAccountNo: 'DE1234567890' };

  it('a payout with extra fields sends them beside ours, as they are', async () => {
    const c = client();
    await c.createPayout({ ...payout, extra: { payeeBankCode: 'DEUTDEFF', purpose: { code: 'P01' } } }, { idempotencyKey: 'po_x' });
    const sent = JSON.parse(seen.find((s) => s.url === '/open-api/v1/payouts')!.body);
    expect(sent).toEqual({ ...payout, payeeBankCode: 'DEUTDEFF', purpose: { code: 'P01' } });
    await c.close();
  });

  it('a field we model cannot be overridden through extra, and extra must be an object', async () => {
    const c = client();
    await expect(c.createPayout({ ...payout, extra: { arriveAmount: 1 } }, { idempotencyKey: 'po_y' })).rejects.toMatchObject({
      type: 'ValidationFailed',
      errors: { 'extra.arriveAmount': 'is a field we model: set arriveAmount itself' },
    });
    await expect(c.rechargeEsim({ esimNo: 'esim_1', extra: 'x' as never }, { idempotencyKey: 'rc-2' })).rejects.toMatchObject({ type: 'ValidationFailed', errors: { extra: expect.any(String) } });
    expect(seen).toHaveLength(0);
    await c.close();
  });

  it('a contact update and a hosted KYC carry their extra fields too', async () => {
    const c = client();
    await c.updateContact('crd_ok', { email: 'a@example.com', extra: { locale: 'de' } });
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ email: 'a@example.com', locale: 'de' });
    expect((await c.startHostedKyc({ firstName: 'Ada', lastName: 'Byron', email: 'a@example.com', extra: { documentCountry: 'GB' } })).id).toBe('kyc_hosted');
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ firstName: 'Ada', lastName: 'Byron', email: 'a@example.com', documentCountry: 'GB' });
    await c.close();
  });
});

describe('fields callers pass on to the provider are allow-listed (issue 50)', () => {
  const payout = { merOrderNo: 'po_z', paymentType: 'SWIFT', arriveCurrency: 'EUR', arriveAmount: 1000, payeeFirstName: 'Ada', payeeLastName: 'Byron', payeeAccountNo: 'DE1234567890' };
  const hosted = { firstName: 'Ada', lastName: 'Byron', email: 'a@example.com' };

  it('an extra name outside the endpoint\'s list is refused before any request, naming the field and the list', async () => {
    const c = client();
    const refused = (errors: Record<string, string>) => ({ type: 'ValidationFailed', errors });
    await expect(c.createPayout({ ...payout, extra: { payeeBankCode: 'DEUTDEFF', callbackUrl: 'https://x.example' } }, { idempotencyKey: 'po_z' })).rejects.toMatchObject(
      refused({ 'extra.callbackUrl': 'is not a field extra may carry (only payeeBankCode, purpose)' }),
    );
    await expect(c.rechargeEsim({ esimNo: 'esim_1', extra: { planNo2: 'epln_x' } }, { idempotencyKey: 'rc-3' })).rejects.toMatchObject(
      refused({ 'extra.planNo2': 'is not a field extra may carry (only autoRenew)' }),
    );
    await expect(c.updateContact('crd_ok', { email: 'a@example.com', extra: { billingAddress: {} } })).rejects.toMatchObject(
      refused({ 'extra.billingAddress': 'is not a field extra may carry (only locale, preferredLanguage)' }),
    );
    await expect(c.startHostedKyc({ ...hosted, extra: { webhookUrl: 'https://x.example' } })).rejects.toMatchObject(
      refused({ 'extra.webhookUrl': 'is not a field extra may carry (only documentCountry)' }),
    );
    expect(seen).toHaveLength(0);
    await c.close();
  });

  it.each([
    ['http to another machine', 'http://example.com/done'],
    ['another scheme', 'javascript:alert(1)'],
    ['a user and password', 'https://bank.example@evil.example/done'],
    ['a backslash before the path', 'https://evil.example\\@bank.example/'],
    ['no host', 'https:///done'],
  ])('a redirectUrl with %s is refused before any request', async (_what, redirectUrl) => {
    const c = client();
    await expect(c.startHostedKyc({ ...hosted, redirectUrl })).rejects.toMatchObject({ type: 'ValidationFailed', errors: { redirectUrl: CALLER_URL_RULE } });
    expect(seen).toHaveLength(0);
    await c.close();
  });

  it('an https redirectUrl is sent; loopback http only while the provider is on this machine too (development)', async () => {
    const c = client();
    for (const redirectUrl of ['https://apply.example.com/kyc/done?ref=42', 'http://127.0.0.1:3000/done', 'http://localhost/done']) {
      expect((await c.startHostedKyc({ ...hosted, redirectUrl })).id).toBe('kyc_hosted');
      expect(JSON.parse(seen.at(-1)!.body)).toMatchObject({ redirectUrl });
    }
    await c.close();
    const remote = createProviderClient({ baseUrl: 'https://provider.invalid', apiKey: 'key_x', apiSecret: SECRET, timeoutMs: 1000 });
    await expect(remote.startHostedKyc({ ...hosted, redirectUrl: 'http://127.0.0.1:3000/done' })).rejects.toMatchObject({
      type: 'ValidationFailed',
      errors: { redirectUrl: expect.stringContaining('the provider is not on this machine') },
    });
    await remote.close();
  });
});
