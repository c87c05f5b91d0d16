import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { DocumentRef, OnboardCardholderInput } from '../../src/shared/types';
import { sampleKycForm, writeDocument, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';


describe('onboardCardholder', () => {
  let stack: Stack;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kyc-docs-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => stack?.close());

  const file = (name: string, bytes: Buffer, contentType: DocumentRef['contentType']): DocumentRef => writeDocument(dir, name, bytes, contentType);
  const documents = () => writeSampleDocuments(dir).documents;
  const form = (extra: Partial<OnboardCardholderInput> = {}): OnboardCardholderInput =>
    sampleKycForm(documents(), { timings: FAST_TIMINGS, ...extra });

  const onboard = (input: OnboardCardholderInput, workflowId = uniqueId('onboard')) =>
    stack.client.workflow.execute('onboardCardholder', { taskQueue: stack.taskQueue, workflowId, args: [input] });

  test('uploads the documents, submits, and answers APPROVED after the review', async () => {
    stack = await startStack({ kycReviewMs: 300 });
    const result = await onboard(form());
    expect(result).toEqual({ id: expect.stringMatching(/^kyc_/), kycStatus: 'APPROVED' });
    const stats = (await stack.control('GET', '/stats')).endpoints;
    expect(stats.createPresignedUpload.requests).toBe(3);
    expect(stats.submitKycForm.requests).toBe(1);
  });

  test('an idNumber starting REJECT ends REJECTED with the reason, as a result', async () => {
    stack = await startStack({ kycReviewMs: 200 });
    const result = await onboard(form({ idNumber: 'REJECT-123' }));
    expect(result.kycStatus).toBe('REJECTED');
    expect(result.reason).toEqual(expect.any(String));
  });

  test('a restricted nationality fails ValidationFailed naming the field; the same files then serve a valid submission', async () => {
    stack = await startStack({ kycReviewMs: 200 });
    const docs = documents();
    const idNumber = `P${randomBytes(6).toString('hex')}`;
    const failure = await workflowFailure(onboard(form({ nationality: 'RU', idNumber, documents: docs })));
    expect(failure.type).toBe('ValidationFailed');
    expect((failure.details![0] as { errors: Record<string, string> }).errors).toHaveProperty('nationality');
    // Identity data stays out of failure messages.
    expect(failure.message).not.toContain(idNumber);
    expect(failure.message).not.toContain('Lovelace');
    const result = await onboard(form({ idNumber, documents: docs }));
    expect(result.kycStatus).toBe('APPROVED');
  });

  test('a document over 10 MB fails ValidationFailed before any upload request', async () => {
    stack = await startStack();
    const big = file('big.pdf', Buffer.alloc(10 * 1024 * 1024 + 1, 0x20), 'application/pdf');
    const failure = await workflowFailure(onboard(form({ documents: { ...documents(), attachments: [big] } })));
    expect(failure.type).toBe('ValidationFailed');
    expect((failure.details![0] as { errors: Record<string, string> }).errors).toHaveProperty(['documents.attachments.0']);
    const stats = (await stack.control('GET', '/stats')).endpoints;
    expect(stats.createPresignedUpload).toBeUndefined();
    expect(stats.upload).toBeUndefined();
    expect(stats.submitKycForm).toBeUndefined();
  });

  test('form and document rules are checked before any provider call', async () => {
    stack = await startStack();
    const failure = await workflowFailure(
      onboard(form({ idType: 'ID_CARD', birthDate: '2999-01-01', documents: { idFront: { path: '', contentType: 'image/gif' as 'image/png' }, attachments: [] } })),
    );
    expect(failure.type).toBe('ValidationFailed');
    const { errors } = failure.details![0] as { errors: Record<string, string> };
    expect(Object.keys(errors)).toEqual(
      expect.arrayContaining(['birthDate', 'documents.idBack', 'documents.attachments', 'documents.idFront.path', 'documents.idFront.contentType']),
    );
    expect((await stack.control('GET', '/stats')).endpoints).toEqual({});
  });

  test('a repeated start with the same workflow ID does not submit again', async () => {
    stack = await startStack({ kycReviewMs: 200 });
    const workflowId = uniqueId('onboard-repeat');
    const input = form();
    const first = await onboard(input, workflowId);
    const second = await onboard(input, workflowId);
    expect(second).toEqual(first);
    const stats = (await stack.control('GET', '/stats')).endpoints;
    expect(stats.submitKycForm.requests).toBe(1);
  });
});
