/** Issue points 2, 7 and 11: the envelope, 400 naming every bad field, the spec's rules, robustness. */
import { BASE, Harness, kycForm } from './helpers/harness';
import { signHeaders } from './helpers/signer';

const h = new Harness();
beforeAll(() => h.start());
afterAll(() => h.stop());
beforeEach(() => h.reset());

describe('envelope and field errors', () => {
  it('names every bad field of POST /cards with its rule (the spec gives email no format: not refused)', async () => {
    const res = await h.api('POST', '/cards', {
      body: { cardBinId: 'bin_mc_contact', initialAmount: 99, firstName: 'R2-D2', lastName: 'x'.repeat(26), pin: '1123', tags: ['a', 'b', 'c', 'd', 'e', 'f', 'g'], email: 'nope' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      message: 'VALIDATION_FAILED',
      errors: {
        initialAmount: 'must be an integer between 100 and 4000000',
        firstName: 'must be 1-25 letters, spaces, apostrophes or hyphens',
        lastName: 'must be 1-25 letters, spaces, apostrophes or hyphens',
        pin: 'must be 4 digits, no digit repeated',
        tags: 'must be an array of up to 6 tags',
        mobilePrefix: 'is required for this cardBinId',
        mobile: 'is required for this cardBinId',
      },
    });
  });

  it('answers 400 with errors.cardBinId for an unknown or stale BIN', async () => {
    const res = await h.api('POST', '/cards', { body: { cardBinId: 'bin_retired', initialAmount: 100, firstName: 'A', lastName: 'B' } });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors!)).toEqual(['cardBinId']);
  });

  it('enforces each BIN condition', async () => {
    const base = { initialAmount: 100, firstName: 'A', lastName: 'B' };
    const us = await h.api('POST', '/cards', { body: { ...base, cardBinId: 'bin_visa_us' } });
    expect(us.body.errors).toEqual({ billingAddress: 'is required for a US cardBinId' });
    const usOk = await h.api('POST', '/cards', { body: { ...base, cardBinId: 'bin_visa_us', billingAddress: { line1: '1 Main St', city: 'Austin', state: 'TX', postalCode: '73301', country: 'US' } } });
    expect(usOk.status).toBe(200);
    const pinNotSupported = await h.api('POST', '/cards', { body: { ...base, cardBinId: 'bin_visa_basic', pin: '1234' } });
    expect(pinNotSupported.body.errors).toEqual({ pin: 'is not supported by this cardBinId' });
    expect((await h.api('POST', '/cards', { body: { ...base, cardBinId: 'bin_visa_pin', pin: '1234' } })).status).toBe(200);
    const kyc = await h.api('POST', '/cards', { body: { ...base, cardBinId: 'bin_mc_kyc' } });
    expect(kyc.body.errors).toEqual({ cardholderId: 'is required for this cardBinId' });
  });

  it('accepts and preserves non-Latin names, apostrophes and hyphens', async () => {
    const res = await h.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: '芽衣', lastName: "O'Brien-Łukasz" } });
    expect(res.status).toBe(200);
    expect(res.body.data.cardholderName).toBe("芽衣 O'Brien-Łukasz");
    expect(res.body.data.cardNumber).toMatch(/^485932\*{6}\d{4}$/);
  });

  it('checks amounts: funding 100..4000000 and within the wallet, withdrawal >= 10 and within the card', async () => {
    const card = await h.enabledCard({ initialAmount: 1000 });
    for (const amount of [99, 4_000_001, 100.5, '100', null]) {
      const res = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount } });
      expect(res.body.errors).toEqual({ amount: 'must be an integer between 100 and 4000000' });
    }
    expect((await h.api('POST', `/cards/${card.cardId}/funding`, { body: {} })).body.errors).toEqual({ amount: 'is required' });
    expect((await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 9 } })).body.errors).toEqual({ amount: 'must be an integer of at least 10' });
    const over = await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 1001 } });
    expect(over.status).toBe(422);
    expect(over.body.message).toMatch(/^INSUFFICIENT_FUNDS/);
    expect((await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 1000 } })).status).toBe(200); // full balance, no reserve
    await h.control('POST', '/wallet', { amount: -99_000_000 });
    const short = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 4_000_000 } });
    expect(short.status).toBe(422);
  });

  it('validates the KYC form: every field, enums, dates, ID_CARD back side, token slots', async () => {
    const res = await h.api('POST', '/kyc/cardholders/form', {
      body: { gender: 'OTHER', birthDate: '2999-01-01', idExpiryDate: '2001-01-01', idType: 'ID_CARD', mobilePrefix: '+81', occupation: 'ASTRONAUT', nationality: 'jp', attachments: [] },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toMatchObject({
      firstName: 'is required',
      gender: 'must be one of MALE, FEMALE',
      birthDate: 'must be a date yyyy-MM-dd in the past',
      idExpiryDate: 'must be a date yyyy-MM-dd not yet passed',
      mobilePrefix: 'must be 1-4 digits',
      occupation: expect.stringMatching(/^must be one of GOVERNMENT_OFFICERS/),
      nationality: 'must be an ISO 3166-1 alpha-2 code in upper case',
      idFrontToken: 'is required',
      idBackToken: 'is required when idType is ID_CARD',
      attachments: 'must be an array of 1 to 6 fileTokens',
      sourceOfFund: 'is required',
    });
  });

  it('rejects image tokens of the wrong upload type, repeated tokens, unknown and not-yet-uploaded tokens', async () => {
    const selfie = await h.upload('SELFIE_PROOF');
    const id = await h.upload('IDENTITY_PROOF');
    const pre = await h.api('POST', '/kyc/presignedUploads', { body: { fileName: 'x.pdf', contentType: 'application/pdf', type: 'ADDRESS_PROOF' } });
    const notUploaded = pre.body.data.fileToken;
    const res = await h.api('POST', '/kyc/cardholders/form', {
      body: kycForm({ idFrontToken: selfie, attachments: [id, notUploaded, 'ftok_unknown1', id] }, { selfieToken: id }),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({
      idFrontToken: 'must be a fileToken of upload type IDENTITY_PROOF',
      selfieToken: 'must be a fileToken of upload type SELFIE_PROOF',
      'attachments.0': 'must not repeat the token of selfieToken',
      'attachments.1': 'file was not uploaded yet',
      'attachments.2': 'unknown fileToken',
      'attachments.3': 'must not repeat the token of selfieToken',
    });
  });

  it('rejects restricted jurisdictions with 400, no record, no fee, and leaves the tokens usable', async () => {
    const front = await h.upload('IDENTITY_PROOF');
    const report = await h.upload('IDENTITY_PROOF', 'application/pdf');
    const walletBefore = (await h.control('GET', '/wallet')).body.availableBalance;
    const res = await h.api('POST', '/kyc/cardholders/form', { body: kycForm({ idFrontToken: front, attachments: [report] }, { nationality: 'RU', livingCountry: 'KP' }) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ nationality: 'is a restricted jurisdiction', livingCountry: 'is a restricted jurisdiction' });
    expect((await h.control('GET', '/wallet')).body.availableBalance).toBe(walletBefore);
    // The same tokens still work.
    const ok = await h.api('POST', '/kyc/cardholders/form', { body: kycForm({ idFrontToken: front, attachments: [report] }) });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ id: expect.stringMatching(/^kyc_/), kycStatus: 'PENDING', mode: 'FORM' });
    // …once: tokens are single-use.
    const again = await h.api('POST', '/kyc/cardholders/form', { body: kycForm({ idFrontToken: front, attachments: [report] }) });
    expect(again.body.errors).toEqual({ idFrontToken: 'fileToken was already used', 'attachments.0': 'fileToken was already used' });
  });

  it('checks the presigned upload: same Content-Type, no auth headers, ≤ 10 MB, single-use URL, expiry', async () => {
    const pre = async (contentType = 'image/jpeg') => (await h.api('POST', '/kyc/presignedUploads', { body: { fileName: 'p.jpg', contentType, type: 'SELFIE_PROOF' } })).body.data;
    const bad = await h.api('POST', '/kyc/presignedUploads', { body: { fileName: 'x'.repeat(129), contentType: 'image/gif', type: 'PHOTO' } });
    expect(Object.keys(bad.body.errors!).sort()).toEqual(['contentType', 'fileName', 'type']);

    const a = await pre();
    expect(a).toEqual({ uploadUrl: expect.stringMatching(new RegExp(`^${h.url}/uploads/`)), fileToken: expect.stringMatching(/^ftok_/), expiresIn: 600 });
    const wrongType = await fetch(a.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: Buffer.from('x') });
    expect(wrongType.status).toBe(415);
    expect(((await wrongType.json()) as any).message).toMatch(/^UNSUPPORTED_MEDIA_TYPE/);
    const withAuth = await fetch(a.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg', 'x-api-key': 'key_test' }, body: Buffer.from('x') });
    expect(withAuth.status).toBe(400);
    const tooBig = await fetch(a.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: Buffer.alloc(10 * 1024 * 1024 + 1) });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as any).code).toBe(413);
    const good = await fetch(a.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: Buffer.alloc(10 * 1024 * 1024) });
    expect(good.status).toBe(200);
    const second = await fetch(a.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: Buffer.from('x') });
    expect(second.status).toBe(409);
    expect(((await second.json()) as any).message).toMatch(/^UPLOAD_URL_USED/);

    await h.reset({ uploadExpiresInSec: 1 });
    const b = await pre();
    expect(b.expiresIn).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    const expired = await fetch(b.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: Buffer.from('x') });
    expect(expired.status).toBe(410);
    expect(await expired.json()).toEqual({ code: 410, message: 'UPLOAD_URL_EXPIRED' });
  });
});

describe('robustness', () => {
  const raw = async (method: string, path: string, body: string | Buffer | undefined, contentType?: string) => {
    const headers: Record<string, string> = signHeaders(method, BASE + path, body ?? '', { apiKey: 'key_test', secret: 'secret_test' });
    if (contentType) headers['content-type'] = contentType;
    const res = await fetch(h.url + BASE + path, { method, headers, body });
    return { status: res.status, body: (await res.json()) as any, headers: res.headers };
  };

  it('answers malformed JSON with 400 naming the body', async () => {
    const res = await raw('POST', '/cards', '{"cardBinId": ', 'application/json');
    expect(res.body).toEqual({ code: 400, message: 'VALIDATION_FAILED', errors: { body: 'must be valid JSON' } });
  });

  it('answers non-object JSON and wrong types with 400', async () => {
    expect((await raw('POST', '/cards', '[1,2]', 'application/json')).body.errors).toEqual({ body: 'must be a JSON object' });
    expect((await raw('POST', '/cards', 'null', 'application/json')).status).toBe(400);
    const res = await h.api('POST', '/cards', { body: { cardBinId: 7, initialAmount: {}, firstName: [], lastName: true, billingAddress: 'x', tags: 'a' } });
    expect(Object.keys(res.body.errors!).sort()).toEqual(['billingAddress', 'cardBinId', 'firstName', 'initialAmount', 'lastName', 'tags']);
  });

  it('answers a non-JSON media type with 415', async () => {
    const res = await raw('POST', '/kyc/presignedUploads', 'fileName=a', 'application/x-www-form-urlencoded');
    expect(res.status).toBe(415);
    expect(res.body.message).toMatch(/^UNSUPPORTED_MEDIA_TYPE/);
  });

  it('answers a huge body with 413 in the envelope', async () => {
    const big = JSON.stringify({ fileName: 'x'.repeat(1024 * 1024 + 10) });
    const res = await raw('POST', '/kyc/presignedUploads', big, 'application/json');
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ code: 413, message: 'PAYLOAD_TOO_LARGE' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  });

  it('answers unknown paths 404 and wrong methods 405 in the envelope', async () => {
    expect((await h.api('GET', '/does/not/exist')).body).toEqual({ code: 404, message: 'NOT_FOUND: no such endpoint' });
    const patch = await h.api('PATCH', '/cards/crd_1');
    expect(patch.status).toBe(405);
    expect(patch.body.message).toMatch(/^METHOD_NOT_ALLOWED/);
    expect((await fetch(`${h.url}/elsewhere`)).status).toBe(404);
  });

  it('keeps serving after all of the above', async () => {
    expect((await h.api('GET', '/wallet/balance')).status).toBe(200);
  });
});
