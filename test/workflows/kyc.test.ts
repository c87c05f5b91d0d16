import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { DocumentRef, OnboardCardholderInput } from '../../src/shared/types';
import { sampleFolder, sampleKycForm, writeDocument, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';


describe('onboardCardholder', () => {
  let stack: Stack;
  let dir: string;
  beforeAll(() => {
    dir = sampleFolder();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => stack?.close());

  // Each document set in a folder of its own: the first onboarding that uploads from a folder makes it its applicant's.
  const file = (name: string, bytes: Buffer, contentType: DocumentRef['contentType']): DocumentRef => writeDocument(sampleFolder(), name, bytes, contentType);
  const documents = () => writeSampleDocuments().documents;
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

  test('a restricted nationality fails ValidationFailed naming the field; the same files, stored for a new onboarding, then serve a valid submission', async () => {
    stack = await startStack({ kycReviewMs: 200 });
    const docs = documents();
    const idNumber = `P${randomBytes(6).toString('hex')}`;
    const failure = await workflowFailure(onboard(form({ nationality: 'RU', idNumber, documents: docs })));
    expect(failure.type).toBe('ValidationFailed');
    expect((failure.details![0] as { errors: Record<string, string> }).errors).toHaveProperty('nationality');
    // Identity data stays out of failure messages.
    expect(failure.message).not.toContain(idNumber);
    expect(failure.message).not.toContain('Lovelace');
    // A new onboarding reads only documents stored for it: the failed one's folder is its own.
    const again = await workflowFailure(onboard(form({ idNumber, documents: docs })));
    expect(again.type).toBe('ValidationFailed');
    expect((again.details![0] as { errors: Record<string, string> }).errors).toHaveProperty(['documents.idFront.name'], expect.stringMatching(/^must name a document stored for this applicant/));
    const result = await onboard(sampleKycForm(docs, { idNumber, timings: FAST_TIMINGS }));
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

  describe('a document is read only from the documents store, never from a path a caller names', () => {
    const noProviderCall = async () => {
      const stats = (await stack.control('GET', '/stats')).endpoints;
      expect(stats.createPresignedUpload).toBeUndefined();
      expect(stats.upload).toBeUndefined();
      expect(stats.submitKycForm).toBeUndefined();
    };
    const refusedFields = async (attachments: DocumentRef[]) => {
      const failure = await workflowFailure(onboard(form({ documents: { ...documents(), attachments } })));
      expect(failure.type).toBe('ValidationFailed');
      return (failure.details![0] as { errors: Record<string, string> }).errors;
    };

    test('a worker path (/proc/self/environ, absolute or climbing out with ..) is refused before any provider call', async () => {
      stack = await startStack();
      const climb = `${relative(stack.config.documentsDir, '/').split('\\').join('/')}/proc/self/environ`;
      const errors = await refusedFields([
        { path: '/proc/self/environ', contentType: 'application/pdf' } as unknown as DocumentRef,
        { name: '/proc/self/environ', contentType: 'application/pdf' },
        { name: climb, contentType: 'application/pdf' },
      ]);
      expect(errors['documents.attachments.0.path']).toMatch(/no longer accepted/);
      expect(errors['documents.attachments.1.name']).toMatch(/inside the workers' documents store/);
      expect(errors['documents.attachments.2.name']).toMatch(/inside the workers' documents store/);
      await noProviderCall();
    });

    test('a symlink in the store to a worker file or to a file outside it is refused before any upload', async () => {
      stack = await startStack();
      const outside = mkdtempSync(join(tmpdir(), 'kyc-outside-'));
      try {
        // A real PDF outside the store: only where it lies refuses it.
        writeFileSync(join(outside, 'stranger.pdf'), '%PDF-1.4\n%%EOF\n');
        symlinkSync('/proc/self/environ', join(dir, 'environ.pdf'));
        symlinkSync(join(outside, 'stranger.pdf'), join(dir, 'stranger.pdf'));
        const storeName = (n: string) => relative(stack.config.documentsDir, join(dir, n)).split('\\').join('/');
        const errors = await refusedFields([
          { name: storeName('environ.pdf'), contentType: 'application/pdf' },
          { name: storeName('stranger.pdf'), contentType: 'application/pdf' },
        ]);
        expect(errors['documents.attachments.0']).toMatch(/inside the documents store/);
        expect(errors['documents.attachments.1']).toMatch(/inside the documents store/);
        await noProviderCall();
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    });

    test('bytes that are not the declared type are refused before any upload (magic numbers)', async () => {
      stack = await startStack();
      const errors = await refusedFields([file('not-a-pdf.pdf', Buffer.from('PROVIDER_API_SECRET=secret_x\n'), 'application/pdf'), file('empty.pdf', Buffer.alloc(0), 'application/pdf')]);
      expect(errors['documents.attachments.0']).toMatch(/must be a PDF document/);
      expect(errors['documents.attachments.1']).toMatch(/must be a PDF document/);
      await noProviderCall();
    });
  });

  test('form and document rules are checked before any provider call', async () => {
    stack = await startStack();
    const failure = await workflowFailure(
      onboard(form({ idType: 'ID_CARD', birthDate: '2999-01-01', documents: { idFront: { name: '', contentType: 'image/gif' as 'image/png' }, attachments: [] } })),
    );
    expect(failure.type).toBe('ValidationFailed');
    const { errors } = failure.details![0] as { errors: Record<string, string> };
    expect(Object.keys(errors)).toEqual(
      expect.arrayContaining(['birthDate', 'documents.idBack', 'documents.attachments', 'documents.idFront.name', 'documents.idFront.contentType']),
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
