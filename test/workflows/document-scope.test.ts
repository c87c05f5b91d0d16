/**
 * Issue 50 ("Authority"): a KYC document is read only for the applicant it was stored for. On a real
 * server, through the typed client: applicant B's onboarding naming applicant A's document (in A's
 * onboarding folder, or in a folder the store handed out that A's onboarding used) is refused
 * ValidationFailed naming the field and the rule before any upload, and A's own onboarding uploads it.
 */
import { CardIssuingClient } from '../../src/client';
import { onboardingWorkflowId } from '../../src/client/requests';
import { DocumentStore } from '../../src/documents/store';
import { SAMPLE_PDF, SAMPLE_PNG, sampleKycForm } from '../../src/sandbox/kyc-samples';
import { onboardingDocumentName } from '../../src/shared/kyc-rules';
import type { KycDocuments } from '../../src/shared/types';
import { clientFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';

const STORED_FOR_THIS_APPLICANT = /^must name a document stored for this applicant/;

describe('a KYC document is read only for the applicant it was stored for', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ kycReviewMs: 200 });
  });
  afterAll(async () => stack?.close());

  const client = () => new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing });
  const key = (who: string) => uniqueId(`scope-${who}`).slice(0, 40);
  const uploads = async () => ((await stack.control('GET', '/stats')).endpoints.createPresignedUpload?.requests as number | undefined) ?? 0;
  const submissions = async () => ((await stack.control('GET', '/stats')).endpoints.submitKycForm?.requests as number | undefined) ?? 0;

  /** A passport, a selfie and a report written under `folder` of the store (a name in it, no trailing /). */
  const storeIn = (folder: string): KycDocuments => {
    const store = new DocumentStore(stack.config.documentsDir);
    const write = (file: string, bytes: Buffer) => store.write(`${folder}/${file}`, bytes);
    return {
      idFront: { name: write('passport.png', SAMPLE_PNG), contentType: 'image/png' },
      selfie: { name: write('selfie.png', SAMPLE_PNG), contentType: 'image/png' },
      attachments: [{ name: write('report.pdf', SAMPLE_PDF), contentType: 'application/pdf' }],
    };
  };
  // The documents as named (sampleKycForm's own argument would be copied for a new applicant).
  const onboard = (idempotencyKey: string, documents: KycDocuments) => client().onboardCardholder({ ...sampleKycForm({} as KycDocuments, { documents, timings: FAST_TIMINGS }), idempotencyKey });

  test("B's onboarding naming A's document (in A's onboarding folder) is refused before any upload; A's own onboarding uploads it", async () => {
    const [keyA, keyB] = [key('a'), key('b')];
    const forA = storeIn(onboardingWorkflowId(keyA));
    const forB = storeIn(onboardingWorkflowId(keyB));
    expect(forA.idFront.name).toBe(onboardingDocumentName(onboardingWorkflowId(keyA), 'passport.png'));

    const [uploadsBefore, submissionsBefore] = [await uploads(), await submissions()];
    const refused = await clientFailure(onboard(keyB, { ...forB, idFront: forA.idFront }));
    expect(refused.type).toBe('ValidationFailed');
    expect(refused.fieldErrors).toEqual({ 'documents.idFront.name': expect.stringMatching(STORED_FOR_THIS_APPLICANT) });
    expect(refused.message).toContain(`documents.idFront.name must name a document stored for this applicant (in this onboarding's folder ${onboardingWorkflowId(keyB)}/`);
    // Before any upload: B's own documents were not uploaded either, and nothing was submitted.
    expect([await uploads(), await submissions()]).toEqual([uploadsBefore, submissionsBefore]);

    // Losing nothing: A's onboarding uploads its documents (3) and is approved.
    expect(await onboard(keyA, forA)).toMatchObject({ kycStatus: 'APPROVED' });
    expect(await uploads()).toBe(uploadsBefore + 3);
  });

  test("a folder the store handed out is the first onboarding's: B naming a document of it after A used it is refused before any upload", async () => {
    const [keyA, keyB] = [key('a'), key('b')];
    const forA = storeIn(new DocumentStore(stack.config.documentsDir).handOut());
    expect(await onboard(keyA, forA)).toMatchObject({ kycStatus: 'APPROVED' });

    const uploadsBefore = await uploads();
    const refused = await clientFailure(onboard(keyB, { ...storeIn(onboardingWorkflowId(keyB)), attachments: forA.attachments }));
    expect(refused.type).toBe('ValidationFailed');
    expect(refused.fieldErrors).toEqual({ 'documents.attachments.0.name': expect.stringMatching(STORED_FOR_THIS_APPLICANT) });
    expect(await uploads()).toBe(uploadsBefore);
  });
});
