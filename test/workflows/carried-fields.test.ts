/**
 * What only a run continued as new carries (workflows/lib/roll-over.ts): a payout's created order
 * (`following`), a tracking's deadline (`deadlineAt`), an onboarding's wait without the applicant
 * (`awaiting`). From a caller's start each would skip a check or a wait (the approval, the POST, the
 * submission), so each is refused ValidationFailed naming it, before any provider call.
 */
import { rmSync } from 'node:fs';
import { sampleFolder, sampleKycForm, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

const refusal = async (type: string, input: unknown) => {
  const failure = await workflowFailure(stack.client.workflow.execute(type, { taskQueue: stack.taskQueue, workflowId: uniqueId(type), args: [input] }));
  return { type: failure.type, errors: (failure.details?.[0] as { errors: Record<string, string> }).errors };
};
const requests = async (endpoint: string): Promise<number> => (await stack.control('GET', '/stats')).endpoints[endpoint]?.requests ?? 0;
const RULE = /^is not a field of .*: a run carries it across a continue-as-new only$/;

test("a payout started with `following` (as if its order were created) is refused naming it; nothing is posted", async () => {
  const merOrderNo = uniqueId('po').slice(0, 40);
  const created = { merOrderNo, status: 'PENDING' };
  const payout = { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 10_000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: FAST_TIMINGS };
  const refused = await refusal('sendPayout', { ...payout, following: { created, deadlineAt: Date.now() + 60_000 } });
  expect(refused.type).toBe('ValidationFailed');
  expect(refused.errors.following).toMatch(RULE);
  expect(await requests('createPayout')).toBe(0);
});

test('a payout tracking started with `deadlineAt` is refused naming it', async () => {
  const refused = await refusal('trackPayout', { merOrderNo: uniqueId('po').slice(0, 40), deadlineAt: Date.now() + 60_000 });
  expect(refused).toMatchObject({ type: 'ValidationFailed', errors: { deadlineAt: expect.stringMatching(RULE) } });
  expect(await requests('getPayout')).toBe(0);
});

test('an onboarding started with `awaiting` beside its submission is refused naming it; nothing is uploaded or submitted', async () => {
  const dir = sampleFolder();
  try {
    const input = { ...sampleKycForm(writeSampleDocuments(dir).documents, { timings: FAST_TIMINGS }), awaiting: { progress: { mode: 'form', warnings: [], cardholderId: 'ch_x' }, deadlineAt: Date.now() + 60_000 } };
    const refused = await refusal('onboardCardholder', input);
    expect(refused).toMatchObject({ type: 'ValidationFailed', errors: { awaiting: expect.stringMatching(RULE) } });
    expect([await requests('createPresignedUpload'), await requests('submitKycForm')]).toEqual([0, 0]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
