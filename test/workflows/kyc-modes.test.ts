/** onboardCardholder's other modes: the deprecated manual submission and the hosted flow. */
import { rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { sampleFolder, SAMPLE_PDF, SAMPLE_PNG, sampleKycForm, writeDocument, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { CardIssuingClient } from '../../src/client';
import type { ManualKycInput, OnboardCardholderInput } from '../../src/shared/types';
import { CALLER_URL_RULE } from '../../src/provider-api/rules';
import { workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

describe('onboardCardholder: manual and hosted', () => {
  let stack: Stack;
  let dir: string;
  beforeAll(() => {
    dir = sampleFolder();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => stack?.close());

  const deprecations: string[] = [];
  const client = () => new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing, onDeprecation: (m) => deprecations.push(m) });
  const manual = (extra: Partial<ManualKycInput> = {}): ManualKycInput => ({
    mode: 'manual',
    firstName: 'Grace',
    lastName: 'Hopper',
    idType: 'PASSPORT',
    idNumber: `M${randomUUID().slice(0, 8)}`,
    documents: { attachments: [writeDocument(sampleFolder(), `report-${randomUUID()}.pdf`, SAMPLE_PDF, 'application/pdf')] },
    timings: FAST_TIMINGS,
    ...extra,
  });

  test('the manual submission is reviewed, and its deprecation (removal date 10 August 2026) reaches the caller', async () => {
    stack = await startStack({ kycReviewMs: 200 });
    const result = await client().onboardCardholder({ ...manual(), idempotencyKey: uniqueId('kyc').slice(0, 40) });
    expect(result).toMatchObject({ id: expect.any(String), kycStatus: 'APPROVED', warnings: [expect.stringContaining('10 August 2026')] });
    expect(deprecations).toEqual([expect.stringContaining('removal date 10 August 2026')]);
    const stats = (await stack.control('GET', '/stats')).endpoints;
    expect(stats.submitKycManual.requests).toBe(1);
    expect(stats.submitKycForm?.requests ?? 0).toBe(0);
  });

  test('a manual submission whose report is not a PDF fails ValidationFailed before any upload', async () => {
    stack = await startStack();
    const input = manual({ documents: { attachments: [writeDocument(dir, 'report.png', SAMPLE_PNG, 'image/png')] } });
    const failure = await workflowFailure(stack.client.workflow.execute('onboardCardholder', { taskQueue: stack.taskQueue, workflowId: uniqueId('kyc-manual'), args: [input] }));
    expect(failure.type).toBe('ValidationFailed');
    expect((failure.details![0] as { errors: Record<string, string> }).errors).toHaveProperty(['documents.attachments.0.contentType']);
    expect((await stack.control('GET', '/stats')).endpoints.createPresignedUpload?.requests ?? 0).toBe(0);
  });

  test('a form submission whose answer was lost ends SubmissionOutcomeUnknown; a new start of the same workflow ID does not submit again (OutcomeUnknown, one fee)', async () => {
    // Every form submission answers 500, half of them after the cardholder was created (and its fee charged).
    stack = await startStack({ kycReviewMs: 60_000, faults: { endpoints: { 'POST /kyc/cardholders/form': { errorRate: 1 } } } });
    const charged = async (): Promise<number> => (await stack.control('GET', '/ledger')).totals.charged;
    let workflowId: string | undefined;
    let input: OnboardCardholderInput | undefined;
    for (let attempt = 0; attempt < 12 && workflowId === undefined; attempt++) {
      const candidate = sampleKycForm(writeSampleDocuments(dir).documents, { timings: FAST_TIMINGS });
      const id = uniqueId('kyc-unknown');
      const before = await charged();
      const failure = await workflowFailure(stack.client.workflow.execute('onboardCardholder', { taskQueue: stack.taskQueue, workflowId: id, args: [candidate] }));
      expect(failure.type).toBe('SubmissionOutcomeUnknown');
      // Keep the case where the submission did reach the provider (the fee was charged).
      if ((await charged()) > before) [workflowId, input] = [id, candidate];
    }
    expect(workflowId).toBeDefined();
    expect((await stack.control('GET', '/stats')).endpoints.submitKycForm.requests).toBeGreaterThan(0);

    await stack.control('PUT', '/config', { faults: { endpoints: { 'POST /kyc/cardholders/form': { errorRate: 0 } } } });
    // Issue 29, case 6: the duplicate check ignores REJECTED cardholders, so a restart never submits again.
    const submissions = (await stack.control('GET', '/stats')).endpoints.submitKycForm.requests;
    const feesBefore = await charged();
    const again = await workflowFailure(stack.client.workflow.execute('onboardCardholder', { taskQueue: stack.taskQueue, workflowId: workflowId!, args: [input!] }));
    expect(again.type).toBe('OutcomeUnknown');
    expect(again.message).toContain('does not send it again');
    expect((await stack.control('GET', '/stats')).endpoints.submitKycForm.requests).toBe(submissions);
    expect(await charged()).toBe(feesBefore);
  });

  test('per-endpoint faults are validated: an unknown endpoint is refused naming the rule', async () => {
    stack = await startStack();
    await expect(stack.control('PUT', '/config', { faults: { endpoints: { 'POST /nowhere': { errorRate: 1 } } } })).rejects.toThrow(/must name an endpoint as METHOD \/path/);
  });

  test('the hosted flow answers its page by query before the review, and ends with the review', async () => {
    stack = await startStack({ kycReviewMs: 1500 });
    const c = client();
    const handle = await c.startOnboardCardholder({ mode: 'hosted', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', timings: FAST_TIMINGS, idempotencyKey: uniqueId('kyc').slice(0, 40) });
    await waitUntil(async () => (await c.onboarding(handle.workflowId)).verificationUrl !== undefined, 30_000, 'the hosted page');
    const progress = await c.onboarding(handle.workflowId);
    expect(progress).toMatchObject({ mode: 'hosted', cardholderId: expect.any(String), verificationUrl: expect.stringContaining(progress.cardholderId!) });
    const result = await handle.result();
    expect(result).toMatchObject({ id: progress.cardholderId, kycStatus: 'APPROVED', verificationUrl: progress.verificationUrl });
  });

  test('a hosted flow whose redirectUrl is not https, or whose extra names a field outside the list, fails ValidationFailed before any call (issue 50)', async () => {
    stack = await startStack();
    const input = { mode: 'hosted', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', redirectUrl: 'http://apply.example.com/done', extra: { callbackUrl: 'https://x.example' }, timings: FAST_TIMINGS };
    const failure = await workflowFailure(stack.client.workflow.execute('onboardCardholder', { taskQueue: stack.taskQueue, workflowId: uniqueId('kyc-hosted'), args: [input] }));
    expect(failure.type).toBe('ValidationFailed');
    expect((failure.details![0] as { errors: Record<string, string> }).errors).toEqual({
      redirectUrl: CALLER_URL_RULE,
      'extra.callbackUrl': 'is not a field extra may carry (only documentCountry)',
    });
    expect((await stack.control('GET', '/stats')).endpoints.startHostedKyc?.requests ?? 0).toBe(0);
  });

  test('a cancellation during the hosted submission lets it finish and record its cardholder; the same key then waits for that cardholder and sends nothing again', async () => {
    // Every provider answer takes 1.5 s: the cancellation arrives while the submission is at the provider.
    stack = await startStack({ kycReviewMs: 600_000, faults: { latencyMs: 1500 } });
    const c = client();
    const request = { mode: 'hosted' as const, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', timings: FAST_TIMINGS, idempotencyKey: uniqueId('kyc').slice(0, 40) };
    const handle = await c.startOnboardCardholder(request);
    await waitUntil(async () => ((await handle.describe()).pendingActivities ?? []).some((a) => a.activityType === 'startHostedKyc'), 30_000, 'the submission under way');
    await handle.cancel();
    await expect(handle.result()).rejects.toMatchObject({ type: 'FlowCancelled' });
    const { cardholderId } = await c.onboarding(handle.workflowId);
    expect(cardholderId).toEqual(expect.any(String));

    const again = c.onboardCardholder(request);
    await waitUntil(async () => (await c.status(handle.workflowId)).status === 'RUNNING', 30_000, 'the restart under the key');
    await stack.control('POST', `/kyc/${cardholderId}/decision`, { kycStatus: 'APPROVED' });
    expect(await again).toMatchObject({ id: cardholderId, kycStatus: 'APPROVED' });
    expect((await stack.control('GET', '/stats')).endpoints.startHostedKyc.requests).toBe(1);
  });
});
