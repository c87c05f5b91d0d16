/** Issue points 1 and 6: every endpoint, the ones known by name only included, and the state machines. */
import { API_KEY, API_SECRET, BASE, Harness, kycForm, sleep, waitFor } from './helpers/harness';
import { signHeaders } from './helpers/signer';

const h = new Harness();
beforeAll(() => h.start());
afterAll(() => h.stop());
beforeEach(() => h.reset());

async function approvedCardholder(idNumber?: string): Promise<string> {
  const front = await h.upload('IDENTITY_PROOF');
  const report = await h.upload('ADDRESS_PROOF', 'application/pdf');
  const res = await h.api('POST', '/kyc/cardholders/form', { body: kycForm({ idFrontToken: front, attachments: [report] }, idNumber ? { idNumber } : {}) });
  expect(res.status).toBe(200);
  return res.body.data.id;
}

describe('cards', () => {
  it('lists the BIN fixtures', async () => {
    const res = await h.api('GET', '/card-bins');
    expect(res.body.data.map((b: any) => b.cardBinId)).toEqual(['bin_visa_basic', 'bin_visa_us', 'bin_mc_contact', 'bin_visa_pin', 'bin_mc_kyc']);
  });

  it('issues CREATING, charges the wallet, then ENABLE with CARD_CREATED; sensitive data is Luhn-valid', async () => {
    const res = await h.api('POST', '/cards', { body: { cardBinId: 'bin_mc_contact', initialAmount: 2000, firstName: 'Ann', lastName: 'Lee', mobilePrefix: '+65', mobile: '91234567', email: 'ann@example.com', tags: ['team-a'] } });
    expect(res.body.data).toMatchObject({ status: 'CREATING', availableBalance: 2000, brand: 'MASTERCARD', tags: ['team-a'] });
    expect((await h.control('GET', '/wallet')).body.availableBalance).toBe(100_000_000 - 2000);
    const created = await waitFor(() => h.receiver.of('CARD_CREATED')[0]);
    expect(created.signatureValid).toBe(true);
    expect(created.event.data).toMatchObject({ cardId: res.body.data.cardId, status: 'ENABLE' });
    const card = await h.api('GET', `/cards/${res.body.data.cardId}`);
    expect(card.body.data).toMatchObject({ status: 'ENABLE', mobilePrefix: '+65', mobile: '91234567', email: 'ann@example.com' });
    const sensitive = await h.api('GET', `/cards/${res.body.data.cardId}/sensitive`);
    const { cardNumber, cvv, expiryMonth, expiryYear } = sensitive.body.data;
    expect(cardNumber).toMatch(/^531993\d{10}$/);
    expect(card.body.data.cardNumber).toBe(`${cardNumber.slice(0, 6)}******${cardNumber.slice(-4)}`);
    expect(luhnValid(cardNumber)).toBe(true);
    expect(cvv).toMatch(/^\d{3}$/);
    expect(expiryMonth).toBeGreaterThanOrEqual(1);
    expect(expiryYear).toBeGreaterThan(new Date().getFullYear());
  });

  it('can deliver CARD_CREATED before the POST /cards answer is read when provisioning takes 0 ms', async () => {
    await h.reset({ cardProvisioningMs: 0 });
    const path = `${BASE}/cards`;
    const raw = JSON.stringify({ cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'Zero', lastName: 'Delay' });
    const headers = { 'content-type': 'application/json', ...signHeaders('POST', path, raw, { apiKey: API_KEY, secret: API_SECRET }) };
    const res = await fetch(h.url + path, { method: 'POST', headers, body: raw });
    expect(res.status).toBe(200);
    expect(res.bodyUsed).toBe(false);
    // The answer's body is held unread: the webhook arrives all the same.
    const created = await waitFor(() => h.receiver.of('CARD_CREATED')[0]);
    expect(res.bodyUsed).toBe(false);
    const answer = (await res.json()) as { data: { cardId: string; status: string } };
    const readAt = Date.now();
    // The webhook reported ENABLE for the very card whose POST answer, read only now, still says CREATING.
    expect(created.event.data).toMatchObject({ cardId: answer.data.cardId, status: 'ENABLE' });
    expect(answer.data.status).toBe('CREATING');
    expect(created.at).toBeLessThanOrEqual(readAt);
  });

  it('provisions firstName FAIL to FAILED with no webhook and the money returned', async () => {
    const res = await h.api('POST', '/cards', { body: { cardBinId: 'bin_visa_basic', initialAmount: 700, firstName: 'FAIL', lastName: 'Case' } });
    await waitFor(async () => (await h.api('GET', `/cards/${res.body.data.cardId}`)).body.data.status === 'FAILED');
    await sleep(50);
    expect(h.receiver.of('CARD_CREATED')).toHaveLength(0);
    expect((await h.control('GET', '/wallet')).body.availableBalance).toBe(100_000_000);
    expect((await h.control('GET', '/ledger')).body.violations).toEqual([]);
  });

  it('freezes, unfreezes, updates PIN and contact, deletes through DELETING to DELETED and keeps the record', async () => {
    const card = await h.enabledCard({ cardBinId: 'bin_visa_pin', pin: '1234', initialAmount: 3000 });
    const frozen = await h.api('POST', `/cards/${card.cardId}/freeze`);
    expect(frozen.body.data.status).toBe('DISABLE');
    expect((await h.api('POST', `/cards/${card.cardId}/freeze`)).body.data.status).toBe('DISABLE'); // retry-safe
    const fundFrozen = await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 100 } });
    expect(fundFrozen.status).toBe(422);
    expect(fundFrozen.body.message).toMatch(/^INVALID_STATE/);
    expect((await h.api('POST', `/cards/${card.cardId}/unfreeze`)).body.data.status).toBe('ENABLE');
    expect((await h.api('POST', `/cards/${card.cardId}/pin`, { body: { pin: '9876' } })).status).toBe(200);
    expect((await h.api('POST', `/cards/${card.cardId}/pin`, { body: { pin: '1111' } })).body.errors).toEqual({ pin: 'must be 4 digits, no digit repeated' });
    const contact = await h.api('POST', `/cards/${card.cardId}/contact`, { body: { email: 'new@example.com' } });
    expect(contact.body.data.email).toBe('new@example.com');
    expect((await h.api('POST', `/cards/${card.cardId}/contact`, { body: { mobilePrefix: '44' } })).body.errors).toEqual({ mobilePrefix: "must include '+'" });

    const deleting = await h.api('DELETE', `/cards/${card.cardId}`);
    expect(deleting.body.data.status).toBe('DELETING');
    await waitFor(async () => (await h.api('GET', `/cards/${card.cardId}`)).body.data.status === 'DELETED');
    expect((await h.api('GET', `/cards/${card.cardId}`)).body.data.availableBalance).toBe(0);
    expect((await h.control('GET', '/wallet')).body.availableBalance).toBe(100_000_000);
    const freezeDeleted = await h.api('POST', `/cards/${card.cardId}/freeze`);
    expect(freezeDeleted.status).toBe(422);
    expect(freezeDeleted.body.message).toMatch(/^INVALID_STATE/);
  });

  it('updates the PIN only on PIN BINs', async () => {
    const card = await h.enabledCard();
    expect((await h.api('POST', `/cards/${card.cardId}/pin`, { body: { pin: '1234' } })).body.errors).toEqual({ pin: "is not supported by this card's BIN" });
  });

  it('expires cards (control) and still lets their balance be withdrawn', async () => {
    const card = await h.enabledCard({ initialAmount: 500 });
    expect((await h.control('POST', `/cards/${card.cardId}/expire`)).body.status).toBe('EXPIRED');
    expect((await h.api('POST', `/cards/${card.cardId}/funding`, { body: { amount: 100 } })).status).toBe(422);
    expect((await h.api('POST', `/cards/${card.cardId}/withdrawal`, { body: { amount: 500 } })).status).toBe(200);
  });

  it('answers 404 NOT_FOUND for unknown cards', async () => {
    expect((await h.api('GET', '/cards/crd_nope')).body).toEqual({ code: 404, message: 'NOT_FOUND: card not found' });
  });
});

describe('KYC', () => {
  it('reviews PENDING to APPROVED with a signed webhook, and the status query shows it', async () => {
    const id = await approvedCardholder();
    const evt = await waitFor(() => h.receiver.of('CARDHOLDER_KYC_STATUS')[0]);
    expect(evt.event.data).toEqual({ id, kycStatus: 'APPROVED' });
    const res = await h.api('GET', `/kyc/cardholders/${id}`);
    expect(res.body.data).toMatchObject({ id, kycStatus: 'APPROVED', mode: 'FORM', firstName: 'Mei', lastName: 'Tanaka', idType: 'PASSPORT', cardCount: 0, maxCardCount: 2 });
  });

  it('rejects idNumber REJECT…, refuses duplicates while PENDING/APPROVED, and allows resubmission after REJECTED', async () => {
    // The duplicate must arrive while the first is still PENDING, even on a loaded machine.
    await h.reset({ kycReviewMs: 1500 });
    const first = await approvedCardholder('REJECT-123');
    const dupFront = await h.upload('IDENTITY_PROOF');
    const dupReport = await h.upload('IDENTITY_PROOF');
    const dup = await h.api('POST', '/kyc/cardholders/form', { body: kycForm({ idFrontToken: dupFront, attachments: [dupReport] }, { idNumber: 'REJECT-123' }) });
    expect(dup.status).toBe(409);
    expect(dup.body.message).toMatch(/^DUPLICATE_CARDHOLDER/);
    await waitFor(async () => (await h.api('GET', `/kyc/cardholders/${first}`)).body.data.kycStatus === 'REJECTED');
    const rejected = (await waitFor(() => h.receiver.of('CARDHOLDER_KYC_STATUS')[0])).event.data;
    expect(rejected).toMatchObject({ id: first, kycStatus: 'REJECTED', reason: expect.any(String) });
    // The duplicate's tokens were not consumed: resubmit with them.
    const again = await h.api('POST', '/kyc/cardholders/form', { body: kycForm({ idFrontToken: dupFront, attachments: [dupReport] }, { idNumber: 'REJECT-123' }) });
    expect(again.status).toBe(200);
  });

  it('issues under an APPROVED cardholder only, at most maxCardCount cards each', async () => {
    await h.reset({ kycReviewMs: 60_000 });
    const id = await approvedCardholder();
    const body = { cardBinId: 'bin_mc_kyc', initialAmount: 100, cardholderId: id };
    const pending = await h.api('POST', '/cards', { body });
    expect(pending.status).toBe(422);
    expect(pending.body.message).toMatch(/^CARDHOLDER_NOT_APPROVED/);
    await h.control('POST', `/kyc/${id}/decision`, { kycStatus: 'APPROVED' });
    const a = await h.api('POST', '/cards', { body });
    expect(a.body.data).toMatchObject({ cardholderName: 'Mei Tanaka', cardholderId: id });
    expect((await h.api('POST', '/cards', { body })).status).toBe(200);
    const third = await h.api('POST', '/cards', { body });
    expect(third.status).toBe(422);
    expect(third.body.message).toMatch(/^CARD_LIMIT_REACHED/);
    expect((await h.api('POST', '/cards', { body: { ...body, cardholderId: 'kyc_unknown' } })).body.errors).toEqual({ cardholderId: 'no such cardholder' });
  });

  it('accepts the deprecated manual submission with PDF attachments only', async () => {
    const png = await h.upload('IDENTITY_PROOF', 'image/png');
    const bad = await h.api('POST', '/kyc/cardholders/manual', { body: { firstName: 'A', lastName: 'B', idType: 'PASSPORT', idNumber: 'M1', attachments: [png] } });
    expect(bad.body.errors).toEqual({ 'attachments.0': 'must be a fileToken of a PDF upload' });
    const pdf = await h.upload('IDENTITY_PROOF', 'application/pdf');
    const ok = await h.api('POST', '/kyc/cardholders/manual', { body: { firstName: 'A', lastName: 'B', idType: 'PASSPORT', idNumber: 'M1', attachments: [pdf] } });
    expect(ok.body.data).toEqual({ id: expect.stringMatching(/^kyc_/), kycStatus: 'PENDING', mode: 'MANUAL' });
  });

  it('starts the hosted KYC flow', async () => {
    const res = await h.api('POST', '/kyc/cardholders/auto', { body: { firstName: 'Hana', lastName: 'Kim', email: 'hana@example.com' } });
    expect(res.body.data).toMatchObject({ kycStatus: 'PENDING', mode: 'AUTO', verificationUrl: expect.stringContaining('/hosted-kyc/') });
    expect((await fetch(res.body.data.verificationUrl)).status).toBe(200);
    await waitFor(async () => (await h.api('GET', `/kyc/cardholders/${res.body.data.id}`)).body.data.kycStatus === 'APPROVED');
  });
});

describe('eSIM', () => {
  it('lists plans, purchases (ISSUED within the wait), looks the order up, recharges the current plan only, reports usage', async () => {
    const plans = await h.api('GET', '/esim/plans');
    expect(plans.body.data.find((p: any) => p.planNo === 'epln_global_1gb')).toMatchObject({ priceUsd: 4.5, priceCents: 450, available: true });
    const buy = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' } });
    expect(buy.body.data).toMatchObject({ status: 'ISSUED', orderNo: expect.stringMatching(/^eord_/), esimNo: expect.stringMatching(/^esim_/), iccid: expect.stringMatching(/^89\d{18}$/), qrCode: expect.stringMatching(/^LPA:/) });
    expect(buy.body.data.operationId).toBeUndefined();
    const issued = await waitFor(() => h.receiver.of('ESIM_ISSUED')[0]);
    expect(issued.event.data).toMatchObject({ orderNo: buy.body.data.orderNo, esimNo: buy.body.data.esimNo, status: 'ISSUED' });
    expect((await h.api('GET', `/esim/orders/${buy.body.data.orderNo}`)).body.data.status).toBe('ISSUED');

    const switchPlan = await h.api('POST', '/esim/recharge', { body: { esimNo: buy.body.data.esimNo, planNo: 'epln_asia_5gb' } });
    expect(switchPlan.body.errors).toEqual({ planNo: "must be the eSIM's current plan (no plan switching)" });
    const recharge = await h.api('POST', '/esim/recharge', { body: { esimNo: buy.body.data.esimNo }, idempotencyKey: 'rc-1' });
    expect(recharge.body.data).toMatchObject({ type: 'RECHARGE', status: 'ISSUED', esimNo: buy.body.data.esimNo, operationId: expect.stringMatching(/^oaop_/) });
    expect(recharge.body.data.orderNo).not.toBe(buy.body.data.orderNo);
    await waitFor(() => h.receiver.of('ESIM_RECHARGED')[0]);
    expect((await h.api('POST', '/esim/recharge', { body: { esimNo: buy.body.data.esimNo }, idempotencyKey: 'rc-1' })).body.data.orderNo).toBe(recharge.body.data.orderNo);

    const usage = await h.api('GET', `/esim/esims/${buy.body.data.esimNo}/usage`);
    expect(usage.body.data).toMatchObject({ esimNo: buy.body.data.esimNo, dataTotalMb: 1024, dataUsedMb: 0, status: 'ACTIVE' });
    // Synced at most once a minute: an immediate second read is the same snapshot.
    expect((await h.api('GET', `/esim/esims/${buy.body.data.esimNo}/usage`)).body.data.syncedAt).toBe(usage.body.data.syncedAt);
  });

  it('answers PAID when issuance is slow, then ISSUED by webhook', async () => {
    await h.reset({ esimWaitMs: 100, esimSlowIssueMs: 300 });
    const buy = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_slow' } });
    expect(['PAID', 'ISSUING']).toContain(buy.body.data.status);
    expect(buy.body.data.iccid).toBeNull();
    await waitFor(() => h.receiver.of('ESIM_ISSUED').find((d) => d.event.data.orderNo === buy.body.data.orderNo));
  });

  it('refunds a failed issuance in full with ESIM_REFUNDED; unavailable plans and short wallets charge nothing', async () => {
    const fail = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_fail' } });
    // The purchase answer says ISSUED or PAID only (spec); the order itself is already refunded.
    expect(fail.body.data.status).toBe('PAID');
    expect((await h.api('GET', `/esim/orders/${fail.body.data.orderNo}`)).body.data.status).toBe('REFUNDED');
    const refunded = await waitFor(() => h.receiver.of('ESIM_REFUNDED')[0]);
    expect(refunded.event.data).toMatchObject({ orderNo: fail.body.data.orderNo, status: 'REFUNDED', refundAmount: 300 });
    expect((await h.control('GET', '/wallet')).body.availableBalance).toBe(100_000_000);

    const soldOut = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_soldout' } });
    expect(soldOut.status).toBe(422);
    expect(soldOut.body.message).toMatch(/^PLAN_UNAVAILABLE/);
    await h.control('POST', '/wallet', { amount: -99_999_900 });
    const poor = await h.api('POST', '/esim/purchase', { body: { planNo: 'epln_global_1gb' } });
    expect(poor.status).toBe(422);
    expect(poor.body.message).toMatch(/^INSUFFICIENT_FUNDS/);
    expect((await h.control('GET', '/wallet')).body.availableBalance).toBe(100);
  });
});

describe('payouts and wallet', () => {
  it('creates a payout, progresses it to COMPLETED with PAYOUT_ webhooks, and debits the wallet', async () => {
    const res = await h.api('POST', '/payouts', {
      idempotencyKey: 'po-x',
      body: { merOrderNo: 'M-1', paymentType: 'SWIFT', arriveCurrency: 'USD', arriveAmount: 5000, payeeFirstName: 'Jo', payeeLastName: 'Park', payeeAccountNo: 'ACC12345', remark: 'invoice 7' },
    });
    expect(res.body.data).toMatchObject({ merOrderNo: 'M-1', status: 'PENDING', quoteRate: 1, settleAmount: 5000, completedAt: null, canCancel: true, remark: 'invoice 7' });
    const done = await waitFor(() => h.receiver.of('PAYOUT_COMPLETED')[0]);
    expect(done.event.data).toMatchObject({ merOrderNo: 'M-1', status: 'COMPLETED', canCancel: false, completedAt: expect.any(Number) });
    expect(h.receiver.of('PAYOUT_PROCESSING')).toHaveLength(1);
    expect((await h.api('GET', '/payouts/M-1')).body.data.status).toBe('COMPLETED');
    expect((await h.api('GET', '/wallet/balance')).body.data.availableBalance).toBe(100_000_000 - 5000);
    expect((await h.api('GET', '/payouts/M-404')).status).toBe(404);
  });
});

function luhnValid(pan: string): boolean {
  let sum = 0;
  [...pan].reverse().forEach((ch, i) => {
    let d = Number(ch);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  });
  return sum % 10 === 0;
}
