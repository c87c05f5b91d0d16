/**
 * Money at the edges, restarts (issue 29, cases 5 and 6): a restart of a workflow ID whose earlier
 * run's request the provider can no longer tie to it. issueCard under the caller's key, restarted
 * after the provider's 24 h key cache, takes the earlier run's card or ends OutcomeUnknown, never
 * a second card; a KYC submission whose answer was lost, and which the provider then REJECTED, is
 * not submitted again by a restart (the duplicate check ignores REJECTED cardholders: a second fee),
 * while one that certainly did not take effect is. The sandbox's ledger is the truth.
 */
import { rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { sampleFolder, SAMPLE_PDF, sampleKycForm, writeDocument, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import type { ManualKycInput, OnboardInput } from '../../src/shared/types';
import type { IssueCardRequest as IssueCardInput } from '../../src/client';
import { CARD_KEY_TTL_MS } from '../../src/activities/cards';
import { clientFailure, workflowFailure } from '../helpers/flows';
import { fixtureBins } from '../helpers/provider';
import { uniqueId, type Stack } from '../helpers/stack';
import { deliveries, waitUntil } from '../helpers/wait';
import { PROFILES, TIMINGS, faults, ledger, loseAfterEffect, requests, stackOn, typedClient } from './helpers';

/** Past the provider's 24 h key cache for POST /cards, by an hour. */
const PAST_KEY_CACHE_MS = CARD_KEY_TTL_MS + 60 * 60 * 1000;
const HANG_AFTER_EFFECT = { hangRate: 1, afterEffect: true };

let stack: Stack;
afterEach(async () => stack?.close());

function detailsOf(failure: { details?: ArrayLike<unknown> | null }): Record<string, unknown> {
  return (failure.details?.[0] ?? {}) as Record<string, unknown>;
}

/**
 * Runs `during` with this process's clock (Date.now) moved forward by `ms`: the workers run in
 * this process, so an activity sees the day gone by, as the sandbox's key clock does. The
 * provider client and the sandbox keep the clock they were built with (signatures stay valid).
 */
async function withClockAhead<T>(ms: number, during: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  const ahead = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
  try {
    return await during();
  } finally {
    ahead.mockRestore();
  }
}

describe.each(PROFILES)("case 5: issueCard under the caller's key, restarted after the provider's 24 h key cache (%s profile)", (profile) => {
  const cardInput = async (idempotencyKey: string): Promise<IssueCardInput> => {
    const { plain } = await fixtureBins(stack);
    return { cardBinId: plain.cardBinId, initialAmount: 1300, firstName: 'Ada', lastName: 'Lovelace', idempotencyKey, timings: TIMINGS };
  };

  test('a run that recorded its card: the restart answers that card, no second card, initialAmount moved once', async () => {
    stack = await stackOn(profile);
    const client = typedClient(stack);
    const input = await cardInput(uniqueId('caller-key').slice(0, 40));
    const first = await client.startIssueCard(input);
    expect(first.workflowId).toBe(`issue-card/${input.idempotencyKey}`);
    const card = await first.result();

    // The provider forgets the key: the same POST under it would now make a second card.
    await stack.control('POST', '/clock', { advanceMs: PAST_KEY_CACHE_MS });
    // The typed client answers a completed run's card itself; a raw start of the same workflow ID (another
    // service's Temporal client, an older version's) is a new run, which must find the card the earlier one made.
    const again = await stack.client.workflow.start('issueCard', { taskQueue: stack.taskQueue, workflowId: first.workflowId, args: [input] });
    expect(again.firstExecutionRunId).not.toBe(first.runId);
    const restarted = (await again.result()) as { cardId: string };
    expect((await client.issueCard(input)).cardId).toBe(card.cardId);

    expect(restarted.cardId).toBe(card.cardId);
    const { cards, totals, violations } = await ledger(stack);
    expect(cards.map((c) => c.cardId)).toEqual([card.cardId]);
    expect(totals.issued).toBe(1300);
    expect(violations).toEqual([]);
    expect(await requests(stack, 'createCard')).toBe(1);
  }, 90_000);
});

describe("case 5: issueCard under the caller's key whose first run was lost after its POST took effect", () => {
  const start = async (client: ReturnType<typeof typedClient>, input: IssueCardInput) => {
    const flow = await client.startIssueCard(input);
    return { flow, handle: stack.client.workflow.getHandle(flow.workflowId, flow.runId) };
  };

  test('restarted within 24 h: the POST under the same key answers the same card, created once', async () => {
    stack = await stackOn('contract', { cardProvisioningMs: 300, faults: { hangMs: 20_000 } });
    const client = typedClient(stack);
    const { plain } = await fixtureBins(stack);
    const input: IssueCardInput = { cardBinId: plain.cardBinId, initialAmount: 1300, firstName: 'Ada', lastName: 'Lovelace', idempotencyKey: uniqueId('caller-key').slice(0, 40), timings: TIMINGS };
    await faults(stack, { 'POST /cards': HANG_AFTER_EFFECT });
    const { handle } = await start(client, input);
    await loseAfterEffect(handle, async () => (await ledger(stack)).cards.length === 1);
    await faults(stack, {});

    const card = await (await client.startIssueCard(input)).result();
    const { cards, totals, violations } = await ledger(stack);
    expect(cards.map((c) => c.cardId)).toEqual([card.cardId]);
    expect(totals.issued).toBe(1300);
    expect(violations).toEqual([]);
  }, 90_000);

  test('restarted after 24 h: OutcomeUnknown with the key, no second POST, no second card', async () => {
    stack = await stackOn('contract', { cardProvisioningMs: 300, faults: { hangMs: 20_000 } });
    const client = typedClient(stack);
    const { plain } = await fixtureBins(stack);
    const idempotencyKey = uniqueId('caller-key').slice(0, 40);
    const input: IssueCardInput = { cardBinId: plain.cardBinId, initialAmount: 1300, firstName: 'Ada', lastName: 'Lovelace', idempotencyKey, timings: TIMINGS };
    await faults(stack, { 'POST /cards': HANG_AFTER_EFFECT });
    const { handle } = await start(client, input);
    await loseAfterEffect(handle, async () => (await ledger(stack)).cards.length === 1);
    await faults(stack, {});

    // A day goes by for the provider's keys and for the workers alike.
    await stack.control('POST', '/clock', { advanceMs: PAST_KEY_CACHE_MS });
    const lost = await withClockAhead(PAST_KEY_CACHE_MS, async () => clientFailure((await client.startIssueCard(input)).result()));

    expect(lost.type).toBe('OutcomeUnknown');
    expect(lost.message).toMatch(/more than 24 h ago/);
    expect(detailsOf(lost)).toMatchObject({ idempotencyKey, endpoint: 'POST /cards', mayHaveTakenEffect: true });
    const { cards, totals, violations } = await ledger(stack);
    expect(cards).toHaveLength(1);
    expect(totals.issued).toBe(1300);
    expect(violations).toEqual([]);
    // The first run's POST may still hang unanswered (uncounted); the restart sent none.
    expect(await requests(stack, 'createCard')).toBeLessThanOrEqual(1);
  }, 90_000);
});

describe('case 6: a KYC restart after a submission that was in fact REJECTED', () => {
  let dir: string;
  beforeAll(() => {
    dir = sampleFolder();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** An identity the sandbox rejects at review (idNumber REJECT…). */
  const rejectedId = () => `REJECT-${randomUUID().slice(0, 8)}`;
  const formInput = (): OnboardInput => sampleKycForm(writeSampleDocuments(dir).documents, { idNumber: rejectedId(), timings: TIMINGS });
  const manualInput = (): ManualKycInput => ({
    mode: 'manual',
    firstName: 'Grace',
    lastName: 'Hopper',
    idType: 'PASSPORT',
    idNumber: rejectedId(),
    documents: { attachments: [writeDocument(sampleFolder(), `report-${randomUUID()}.pdf`, SAMPLE_PDF, 'application/pdf')] },
    timings: TIMINGS,
  });
  const MODES = [
    { mode: 'form', endpoint: 'POST /kyc/cardholders/form', endpointKey: 'submitKycForm', input: formInput },
    { mode: 'manual', endpoint: 'POST /kyc/cardholders/manual', endpointKey: 'submitKycManual', input: manualInput },
  ] as const;

  const execute = (input: OnboardInput, workflowId: string) =>
    stack.client.workflow.execute('onboardCardholder', { taskQueue: stack.taskQueue, workflowId, args: [input] });
  const charged = async () => (await ledger(stack)).totals.charged;
  const kycFee = async () => (await stack.control<{ kycFeeCents: number }>('GET', '/config')).kycFeeCents;
  /** The review ended (the sandbox sent its CARDHOLDER_KYC_STATUS): an idNumber REJECT… is REJECTED. */
  const reviewed = () =>
    waitUntil(async () => (await deliveries(stack.control)).some((d) => d.eventType === 'CARDHOLDER_KYC_STATUS'), 30_000, 'the KYC review ended');

  test.each(MODES)('$mode: the answer was cut off after the submission; the restart ends OutcomeUnknown, one submission, one fee', async ({ endpoint, endpointKey, input }) => {
    stack = await stackOn('contract', { kycReviewMs: 300 });
    const fee = await kycFee();
    await faults(stack, { [endpoint]: { truncateRate: 1 } });
    const workflowId = uniqueId('kyc-rejected');
    const request = input();
    const lost = await workflowFailure(execute(request, workflowId));
    expect(lost.type).toBe('SubmissionOutcomeUnknown');
    expect(await charged()).toBe(fee);
    await reviewed();
    await faults(stack, {});

    const restarted = await workflowFailure(execute(request, workflowId));
    expect(restarted.type).toBe('OutcomeUnknown');
    expect(detailsOf(restarted)).toMatchObject({ endpoint, workflowId, mayHaveTakenEffect: true });
    expect(await requests(stack, endpointKey)).toBe(1);
    expect(await charged()).toBe(fee);
    expect((await ledger(stack)).violations).toEqual([]);
  }, 90_000);

  test('form: the run was lost mid-submission (after its effect, before any answer); the restart ends OutcomeUnknown, one fee', async () => {
    stack = await stackOn('contract', { kycReviewMs: 300, faults: { hangMs: 20_000 } });
    const fee = await kycFee();
    await faults(stack, { 'POST /kyc/cardholders/form': HANG_AFTER_EFFECT });
    const workflowId = uniqueId('kyc-lost');
    const request = formInput();
    const first = await stack.client.workflow.start('onboardCardholder', { taskQueue: stack.taskQueue, workflowId, args: [request] });
    await loseAfterEffect(first, async () => (await charged()) > 0);
    await reviewed();
    await faults(stack, {});

    const restarted = await workflowFailure(execute(request, workflowId));
    expect(restarted.type).toBe('OutcomeUnknown');
    expect(await charged()).toBe(fee);
    // The first run's submission may still hang unanswered (uncounted); the restart sent none.
    expect(await requests(stack, 'submitKycForm')).toBeLessThanOrEqual(1);
    expect((await ledger(stack)).violations).toEqual([]);
  }, 90_000);

  test('counter-case, form: a submission refused before any effect (403) is submitted again by the restart, one fee', async () => {
    stack = await stackOn('contract', { kycReviewMs: 300 });
    const fee = await kycFee();
    await faults(stack, { 'POST /kyc/cardholders/form': { refuseRate: 1, refuseStatus: 403 } });
    const workflowId = uniqueId('kyc-refused');
    const request = formInput();
    const refused = await workflowFailure(execute(request, workflowId));
    expect(refused.type).toBe('InvalidSignature');
    expect(await charged()).toBe(0);
    await faults(stack, {});

    const result = await execute(request, workflowId);
    expect(result).toMatchObject({ id: expect.any(String), kycStatus: 'REJECTED' });
    expect(await requests(stack, 'submitKycForm')).toBe(2);
    expect(await charged()).toBe(fee);
    expect((await ledger(stack)).violations).toEqual([]);
  }, 90_000);
});
