/**
 * Every error type the sandbox can produce, recognised from its real answer over HTTP.
 * Each test asserts the type and the traits a retry policy acts on, not just "it failed".
 */
import type { ProviderClient } from '../../src/provider/client';
import { ProviderError, isProviderError } from '../../src/provider/errors';
import { uploadDocument } from '../../src/provider/uploads';
import { BinCache } from '../../src/provider/bin-cache';
import { ReplayingSigner, closedPort, enabledCard, failureOf, hmac, startHarness, type SandboxHarness } from './helpers/sandbox';

let h: SandboxHarness;
let client: ProviderClient;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(async () => {
  await h.control.reset();
  client = h.client();
});

async function expectProviderError(p: Promise<unknown>, expected: Partial<ProviderError>): Promise<ProviderError> {
  const err = await failureOf(p);
  expect(isProviderError(err)).toBe(true);
  expect(err).toMatchObject(expected);
  return err as ProviderError;
}

const ada = { firstName: 'Ada', lastName: 'Lovelace' };

describe('authentication and the edge', () => {
  it('InvalidSignature: a client signing with the wrong secret', async () => {
    const wrong = h.client({ signer: hmac('secret_wrong') });
    await expectProviderError(wrong.listCardBins(), { type: 'InvalidSignature', status: 403, code: 'INVALID_SIGNATURE', retryable: false, mayHaveTakenEffect: false });
  });

  it('IpNotWhitelisted: loopback is not on the whitelist', async () => {
    await h.control.configure({ whitelist: ['10.9.9.9'] });
    await expectProviderError(client.listCardBins(), { type: 'IpNotWhitelisted', status: 403, retryable: false, mayHaveTakenEffect: false });
  });

  it('NonceReused: a signer that repeats its nonce is refused on the second attempt', async () => {
    const replaying = h.client({ signer: new ReplayingSigner() });
    await replaying.listCardBins();
    await expectProviderError(replaying.listCardBins(), { type: 'NonceReused', status: 409, retryable: true, mayHaveTakenEffect: false });
  });
});

describe('idempotency', () => {
  it('IdempotencyConflict: the same key with a different body', async () => {
    const cardId = await enabledCard(client, h.control);
    await client.fundCard(cardId, { amount: 100 }, { idempotencyKey: 'fund-conflict' });
    await expectProviderError(client.fundCard(cardId, { amount: 200 }, { idempotencyKey: 'fund-conflict' }), {
      type: 'IdempotencyConflict', status: 409, retryable: false, mayHaveTakenEffect: false,
    });
  });

  it('IdempotencyInProgress: the same key while the first attempt is processing', async () => {
    const cardId = await enabledCard(client, h.control);
    await h.control.configure({ operationProcessingMs: 800 });
    const fund = () => client.fundCard(cardId, { amount: 100 }, { idempotencyKey: 'fund-busy' });
    // Whichever attempt arrives first holds the key; the other is told it is in progress.
    const outcomes = await Promise.allSettled([fund(), fund()]);
    const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect(rejected[0].reason).toMatchObject({ type: 'IdempotencyInProgress', status: 409, retryable: true });
    expect(outcomes.find((o) => o.status === 'fulfilled')).toMatchObject({ value: { success: true } });
  });

  it('IdempotencyKeyTerminal: a key whose attempt definitively failed', async () => {
    const cardId = await enabledCard(client, h.control);
    const { availableBalance } = await h.control.call<{ availableBalance: number }>('GET', '/wallet');
    await h.control.adjustWallet(-availableBalance);
    await expectProviderError(client.fundCard(cardId, { amount: 100 }, { idempotencyKey: 'fund-dead' }), { type: 'InsufficientFunds' });
    await h.control.adjustWallet(1_000_000);
    await expectProviderError(client.fundCard(cardId, { amount: 100 }, { idempotencyKey: 'fund-dead' }), {
      type: 'IdempotencyKeyTerminal', status: 409, retryable: false,
    });
  });
});

describe('business refusals', () => {
  it('InsufficientFunds: funding beyond the wallet', async () => {
    const cardId = await enabledCard(client, h.control);
    const { availableBalance } = await h.control.call<{ availableBalance: number }>('GET', '/wallet');
    await h.control.adjustWallet(-availableBalance);
    await expectProviderError(client.fundCard(cardId, { amount: 100 }), { type: 'InsufficientFunds', status: 422, retryable: false, mayHaveTakenEffect: false });
  });

  it('PlanUnavailable: an eSIM plan that is sold out', async () => {
    await expectProviderError(client.purchaseEsim({ planNo: 'epln_soldout' }, { idempotencyKey: 'esim-soldout' }), { type: 'PlanUnavailable', status: 422, retryable: false });
  });

  it('CardholderNotApproved, then CardLimitReached once approved', async () => {
    await h.control.configure({ kycReviewMs: 60_000, maxCardCount: 1 });
    const holder = await client.startHostedKyc({ firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' });
    const onKycBin = { cardBinId: 'bin_mc_kyc', initialAmount: 1000, cardholderId: holder.id };
    await expectProviderError(client.createCard(onKycBin), { type: 'CardholderNotApproved', status: 422, retryable: false });
    await h.control.call('POST', `/kyc/${holder.id}/decision`, { kycStatus: 'APPROVED' });
    await client.createCard(onKycBin);
    await expectProviderError(client.createCard(onKycBin), { type: 'CardLimitReached', status: 422, retryable: false });
  });

  it('DuplicateCardholder: a second PENDING submission of the same identity', async () => {
    const pdf = () => uploadDocument(client, { fileName: 'report.pdf', contentType: 'application/pdf', type: 'IDENTITY_PROOF', bytes: Buffer.from('%PDF-1.4 report') });
    const submission = { ...ada, idType: 'PASSPORT' as const, idNumber: 'P1234567' };
    await client.submitKycManual({ ...submission, attachments: [await pdf()] });
    await expectProviderError(client.submitKycManual({ ...submission, attachments: [await pdf()] }), { type: 'DuplicateCardholder', status: 409, retryable: false });
  });

  it('InvalidState: freezing a card that is still CREATING', async () => {
    const card = await client.createCard({ cardBinId: 'bin_visa_basic', initialAmount: 1000, ...ada });
    await expectProviderError(client.freezeCard(card.cardId), { type: 'InvalidState', status: 422, retryable: false });
  });

  it('ValidationFailed: the field map of a BIN rule the provider enforces', async () => {
    const err = await expectProviderError(client.createCard({ cardBinId: 'bin_mc_contact', initialAmount: 1000, ...ada }), {
      type: 'ValidationFailed', status: 400, code: 'VALIDATION_FAILED', retryable: false,
    });
    expect(Object.keys(err.errors ?? {}).sort()).toEqual(['email', 'mobile', 'mobilePrefix']);
  });

  it('StaleCardBin: POST /cards with a BIN the provider no longer lists', async () => {
    const err = await expectProviderError(client.createCard({ cardBinId: 'bin_retired', initialAmount: 1000, ...ada }), {
      type: 'StaleCardBin', status: 400, retryable: false,
    });
    expect(err.errors).toHaveProperty('cardBinId');
  });

  it('NotFound: a card that does not exist', async () => {
    await expectProviderError(client.getCard('crd_doesnotexist'), { type: 'NotFound', status: 404, retryable: false });
  });
});

describe('failures that may have taken effect', () => {
  it('ServerError: the provider answers 500', async () => {
    await h.control.configure({ faults: { errorRate: 1 } });
    await expectProviderError(client.getWalletBalance(), { type: 'ServerError', status: 500, code: 'INTERNAL_ERROR', retryable: true, mayHaveTakenEffect: true });
  });

  it('Timeout: the answer comes after the client deadline', async () => {
    await h.control.configure({ faults: { latencyMs: 1500 } });
    const started = Date.now();
    await expectProviderError(client.getWalletBalance({ timeoutMs: 300 }), { type: 'Timeout', retryable: true, mayHaveTakenEffect: true });
    expect(Date.now() - started).toBeLessThan(1200);
  });

  it('NetworkError: nothing listens on the port, so nothing was sent', async () => {
    const nowhere = h.client({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
    await expectProviderError(nowhere.listCardBins(), { type: 'NetworkError', code: 'ECONNREFUSED', retryable: true, mayHaveTakenEffect: false });
  });
});

describe('BIN cache', () => {
  it('refreshes at once when POST /cards answers StaleCardBin', async () => {
    const cache = new BinCache(client);
    expect(await cache.get('bin_visa_basic')).toMatchObject({ brand: 'VISA' });
    await cache.get('bin_visa_us');
    expect((await h.control.endpointStats('listCardBins')).requests).toBe(1);

    const err = await failureOf(client.createCard({ cardBinId: 'bin_retired', initialAmount: 1000, ...ada }));
    expect(await cache.noteCreateCardFailure(err)).toBe(true);
    expect((await h.control.endpointStats('listCardBins')).requests).toBe(2);
    expect(await cache.get('bin_retired')).toBeUndefined();
  });
});
