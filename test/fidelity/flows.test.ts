/**
 * Every flow against the three sandbox profiles (CONTRACTS §8): `contract` answers as CONTRACTS
 * says, `minimal` only what the spec promises, in plain wording, with the other payout spelling
 * and bare webhooks, and `divergent` every shape the spec does not show in another way than ours
 * (card actions `data: null`, a recharge with only orderNo and status, order lookups without
 * orderNo, the KYC status as `status`, errors as arrays, other wordings, CARD_CREATED without
 * status, other words for payout statuses). Each flow must end the same way on all three, and
 * the ledger must show money moved exactly as intended. Outcomes are compared as phases
 * (shared/statuses.ts), since the payout's own word differs between the profiles by design.
 */
import { rmSync } from 'node:fs';
import { createProviderClient } from '../../src/provider/client';
import { entityWorkflowId } from '../../src/shared/ids';
import { deleteCardUpdate, freezeCardUpdate, setPinUpdate, unfreezeCardUpdate, updateContactUpdate, withdrawFromCardUpdate } from '../../src/shared/messages';
import { PROVIDER_STATUS } from '../../src/shared/search-attributes';
import { fixtureBins } from '../helpers/provider';
import { waitUntil } from '../helpers/wait';
import { sampleFolder, sampleKycForm, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { phaseOf, type StatusResource } from '../../src/shared/statuses';
import { issueTestCard, workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, allowed, sealedTestPin, startStack, uniqueId, type Stack } from '../helpers/stack';
import { deliveries } from '../helpers/wait';

const PROFILES = ['contract', 'minimal', 'divergent'] as const;
type Profile = (typeof PROFILES)[number];
const outcomes: Record<Profile, Record<string, string>> = { contract: {}, minimal: {}, divergent: {} };
/** The payout words each profile uses: ours, the other spelling, and words the spec does not list. */
const PAYOUT_WORDS: Record<Profile, { done: string; cancelled: string; waiting: string }> = {
  contract: { done: 'COMPLETED', cancelled: 'CANCELLED', waiting: 'PENDING' },
  minimal: { done: 'SUCCESS', cancelled: 'CANCELED', waiting: 'PENDING' },
  divergent: { done: 'SUCCESS', cancelled: 'CANCELED', waiting: 'SUBMITTED' },
};

describe.each(PROFILES)('every flow on the %s profile', (profile) => {
  let stack: Stack;
  let docsDir: string;
  beforeAll(async () => {
    stack = await startStack({ profile, cardProvisioningMs: 200, kycReviewMs: 300, esimIssueMs: 100, esimSlowIssueMs: 1200, esimWaitMs: 300, payoutProcessingMs: 200 });
    docsDir = sampleFolder();
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(docsDir, { recursive: true, force: true });
  });

  const run = <T = any>(type: string, input: object): Promise<T> =>
    stack.client.workflow.execute(type, { taskQueue: stack.taskQueue, workflowId: uniqueId(type), args: [{ timings: FAST_TIMINGS, ...input }] });
  const record = (flow: string, resource: StatusResource, status: string) => {
    outcomes[profile][flow] = phaseOf(resource, status);
  };
  const failureType = async (p: Promise<unknown>, flow: string) => {
    const failure = await workflowFailure(p);
    outcomes[profile][flow] = `failed:${failure.type}`;
    return failure;
  };

  test('the sandbox answers in this profile', async () => {
    const config = await stack.control('PUT', '/config', {});
    expect(config.profile).toBe(profile);
  });

  test('issueCard by webhook and by polling; fundCard and withdrawFromCard move the money once', async () => {
    const card = await issueTestCard(stack, 5000);
    record('issueCard', 'card', card.status);
    expect(card.status).toBe('ENABLE');

    await stack.control('PUT', '/config', { webhook: { dropRate: 1 } });
    const polled = await issueTestCard(stack, 700, { timings: { ...FAST_TIMINGS, webhookWaitMs: 200 } });
    await stack.control('PUT', '/config', { webhook: { dropRate: 0 } });
    record('issueCard by polling', 'card', polled.status);

    const funded = await run('fundCard', { cardId: card.cardId, amount: 2500 });
    record('fundCard', 'operation', funded.status);
    const withdrawn = await run('withdrawFromCard', { cardId: card.cardId, amount: 1000 });
    record('withdrawFromCard', 'operation', withdrawn.status);
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.cards.find((c: { cardId: string }) => c.cardId === card.cardId).availableBalance).toBe(5000 + 2500 - 1000);
  });

  test('a funding beyond the wallet fails InsufficientFunds, read from the wording on the minimal profile', async () => {
    const card = await issueTestCard(stack, 1000);
    const { availableBalance } = await stack.control('GET', '/wallet');
    await stack.control('POST', '/wallet', { amount: -(availableBalance - 500) });
    try {
      const failure = await failureType(run('fundCard', { cardId: card.cardId, amount: 2000 }), 'fundCard beyond the wallet');
      expect(failure.type).toBe('InsufficientFunds');
      // How much was missing, when the provider says so (the contract profile does; the spec promises nothing).
      expect((failure.details![0] as { shortfall?: number }).shortfall).toBe(profile === 'contract' ? 1500 : undefined);
    } finally {
      await stack.control('POST', '/wallet', { amount: availableBalance - 500 });
    }
  });

  test('the card workflow: freeze, unfreeze, PIN, contact, delete succeed whatever the action answers; the state is read from GET', async () => {
    const { pin } = await fixtureBins(stack);
    const card = await issueTestCard(stack, 1000, { cardBinId: pin.cardBinId });
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    const frozen = await handle.executeUpdate(freezeCardUpdate, { args: [allowed(stack, card.cardId, 'freeze')] });
    record('freeze', 'card', frozen.status);
    expect(frozen.status).toBe('DISABLE');
    expect((await handle.executeUpdate(unfreezeCardUpdate, { args: [allowed(stack, card.cardId, 'unfreeze')] })).status).toBe('ENABLE');
    expect((await handle.executeUpdate(setPinUpdate, { args: [allowed(stack, card.cardId, 'pin', { pin: await sealedTestPin(stack, '4821', handle.workflowId) })] })).status).toBe('ENABLE');
    // A field we do not model goes through `extra`, as it is.
    const contact = await handle.executeUpdate(updateContactUpdate, { args: [allowed(stack, card.cardId, 'contact', { email: 'ada@example.com', extra: { preferredLanguage: 'en' } })] });
    record('contact', 'card', contact.status);
    // The deletion takes the provisioning time: 200 ms ended it before the update's read-back on a loaded machine (DELETED,
    // and the withdrawal below then met a deleted card). Five seconds keep the card DELETING through both calls.
    await stack.control('PUT', '/config', { cardProvisioningMs: 5_000 });
    const deleting = await handle.executeUpdate(deleteCardUpdate, { args: [allowed(stack, card.cardId, 'delete')] });
    await stack.control('PUT', '/config', { cardProvisioningMs: 200 });
    record('delete', 'card', deleting.status);
    expect(deleting.status).toBe('DELETING');
    // A DELETING card's update is not refused by us: the provider answers it (the sandbox: InvalidState).
    const err = (await handle.executeUpdate(withdrawFromCardUpdate, { args: [{ amount: 100, idempotencyKey: uniqueId('wdr-deleting').slice(0, 40) }] }).catch((e: unknown) => e)) as { cause?: { type?: string } };
    outcomes[profile]['withdraw while DELETING'] = `failed:${err.cause?.type}`;
    expect(err.cause?.type).toBe('InvalidState');
  });

  test('issueCard names cardBinId when the BIN is not the provider\'s, after one refresh of the BIN list', async () => {
    const failure = await failureType(run('issueCard', { cardBinId: 'bin_not_listed', initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace' }), 'issueCard unknown BIN');
    expect(failure.type).toBe('ValidationFailed');
    expect((failure.details![0] as { errors: Record<string, string> }).errors).toHaveProperty('cardBinId');
  });

  test('a BIN withdrawn after we cached it: POST /cards 400 naming cardBinId is a stale BIN whatever its wording; one refresh, then ValidationFailed naming cardBinId', async () => {
    const { plain } = await fixtureBins(stack);
    await issueTestCard(stack, 100); // the worker's BIN cache holds the plain BIN now
    await stack.control('PUT', '/config', { retiredBins: [plain.cardBinId] });
    try {
      const failure = await failureType(run('issueCard', { cardBinId: plain.cardBinId, initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace' }), 'issueCard withdrawn BIN');
      expect(failure.type).toBe('ValidationFailed');
      expect((failure.details![0] as { errors: Record<string, string> }).errors).toHaveProperty('cardBinId');
    } finally {
      await stack.control('PUT', '/config', { retiredBins: [] });
    }
  });

  test('onboardCardholder: uploads with the fileTokens the provider gives, APPROVED and REJECTED; a card on a KYC BIN under it', async () => {
    const { documents } = writeSampleDocuments(docsDir);
    const approved = await run('onboardCardholder', sampleKycForm(documents, { timings: FAST_TIMINGS }));
    record('onboardCardholder', 'kyc', approved.kycStatus);
    expect(approved.kycStatus).toBe('APPROVED');
    const { kyc } = await fixtureBins(stack);
    const underKyc = await issueTestCard(stack, 1000, { cardBinId: kyc.cardBinId, cardholderId: approved.id, firstName: undefined, lastName: undefined });
    record('issueCard on a KYC BIN', 'card', underKyc.status);
    const rejected = await run('onboardCardholder', sampleKycForm(writeSampleDocuments(docsDir).documents, { idNumber: 'REJECT-42', timings: FAST_TIMINGS }));
    record('onboardCardholder rejected', 'kyc', rejected.kycStatus);
    expect(rejected.kycStatus).toBe('REJECTED');
    // Without webhooks the review is read by polling GET /kyc/cardholders/{id} (divergent: `status`, not `kycStatus`).
    await stack.control('PUT', '/config', { webhook: { dropRate: 1 } });
    try {
      const polled = await run('onboardCardholder', sampleKycForm(writeSampleDocuments(docsDir).documents, { idNumber: 'POLL-7', timings: { ...FAST_TIMINGS, webhookWaitMs: 200 } }));
      record('onboardCardholder by polling', 'kyc', polled.kycStatus);
      expect(polled.kycStatus).toBe('APPROVED');
    } finally {
      await stack.control('PUT', '/config', { webhook: { dropRate: 0 } });
    }
  });

  test('purchaseEsim: issued at once, issued later (PAID), refunded; rechargeEsim', async () => {
    const issued = await run('purchaseEsim', { planNo: 'epln_global_1gb' });
    record('purchaseEsim', 'esimOrder', issued.status);
    const slow = await run('purchaseEsim', { planNo: 'epln_slow' });
    record('purchaseEsim slow', 'esimOrder', slow.status);
    await failureType(run('purchaseEsim', { planNo: 'epln_fail' }), 'purchaseEsim failing');
    const recharged = await run('rechargeEsim', { esimNo: issued.esimNo, extra: { autoRenew: false } });
    record('rechargeEsim', 'esimOrder', recharged.status);
    expect([issued.status, slow.status, recharged.status]).toEqual(['ISSUED', 'ISSUED', 'ISSUED']);
  });

  test('trackPayout: succeeded, failed and cancelled, in the profile spelling', async () => {
    const provider = createProviderClient(stack.config.provider);
    const create = async (payeeAccountNo: string) => {
      const merOrderNo = uniqueId('po').slice(0, 40);
      const body = { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 10_000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo };
      await provider.createPayout(body, { idempotencyKey: merOrderNo });
      return merOrderNo;
    };
    try {
      const done = await run('trackPayout', { merOrderNo: await create('GB29NWBK60161331926819') });
      record('trackPayout', 'payout', done.status);
      expect(done.status).toBe(PAYOUT_WORDS[profile].done);
      const failed = await run('trackPayout', { merOrderNo: await create('FAIL0000001') });
      record('trackPayout failed', 'payout', failed.status);

      await stack.control('PUT', '/config', { payoutProcessingMs: 60_000 });
      const cancelledNo = await create('GB29NWBK60161331926819');
      const trackingId = uniqueId('trackPayout');
      const tracking = stack.client.workflow.execute('trackPayout', { taskQueue: stack.taskQueue, workflowId: trackingId, args: [{ merOrderNo: cancelledNo, timings: FAST_TIMINGS }] });
      // While it waits, what it waits on is visible: on divergent a word the spec does not list, which does not end the flow.
      await waitUntil(async () => (await stack.client.workflow.getHandle(trackingId).describe()).typedSearchAttributes.get(PROVIDER_STATUS) === PAYOUT_WORDS[profile].waiting);
      await stack.control('POST', `/payouts/${cancelledNo}/status`, { status: PAYOUT_WORDS[profile].cancelled });
      const cancelled = await tracking;
      record('trackPayout cancelled', 'payout', cancelled.status);
      expect(cancelled.status).toBe(PAYOUT_WORDS[profile].cancelled);
    } finally {
      await stack.control('PUT', '/config', { payoutProcessingMs: 200 });
      await provider.close();
    }
  });

  test('webhooks went out in the profile shape and every one was delivered', async () => {
    const log = await deliveries(stack.control);
    expect(log.filter((d) => d.status === 'FAILED')).toEqual([]);
    expect(log.some((d) => d.eventType === 'CARD_CREATED' && d.status === 'DELIVERED')).toBe(true);
  });

  test('the ledger shows no violation: no key applied twice, money conserved', async () => {
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });
});

test('all three profiles end every flow the same way', () => {
  expect(Object.keys(outcomes.contract).length).toBeGreaterThanOrEqual(20);
  expect(outcomes.minimal).toEqual(outcomes.contract);
  expect(outcomes.divergent).toEqual(outcomes.contract);
});
