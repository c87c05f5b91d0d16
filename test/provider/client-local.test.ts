/**
 * What the sandbox cannot show, against a tiny local HTTP server: a 2xx the schema does
 * not accept, a proxy's non-JSON page, and the exact headers of the presigned PUT.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderClient, createProviderClient } from '../../src/provider/client';
import { HmacSha256Scheme } from '../../src/provider/signing';
import { uploadDocument } from '../../src/provider/uploads';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

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
    req.resume();
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      const url = req.url!;
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
  it('a 2xx with data of the wrong shape fails as InvalidResponse naming the fields', async () => {
    const c = client();
    await expect(c.getCard('crd_bad')).rejects.toMatchObject({ type: 'InvalidResponse', status: 200, retryable: false, mayHaveTakenEffect: true, errors: expect.objectContaining({ cardId: expect.any(String) }) });
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
