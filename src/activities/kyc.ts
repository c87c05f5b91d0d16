/**
 * KYC activities: documents read from the workers' documents store (documents/store.ts; their
 * bytes never enter workflow history), uploaded for single-use fileTokens; the form submission; and the
 * cardholder's status, as onboarding and card issuance under a KYC BIN need it.
 *
 * Messages and details name fields and rules, never values: identity data stays out of
 * failures and logs (the payload codec encrypts history; that is no reason to fill it).
 *
 * A submission may charge the KYC fee (docs/idempotency.md):
 * | case | POST /kyc/cardholders/form and /manual | POST /kyc/cardholders/auto (hosted) |
 * |---|---|---|
 * | idempotent by the spec | no: no key; a second one for the same idType + idNumber (PENDING or APPROVED) is refused as a duplicate | no: no key and no identity, nothing refuses a second one |
 * | key | none sent (the spec takes none) | none |
 * | retry | none by Temporal (one attempt): the workflow decides from the failure | the same |
 * | worker crash, 5xx, timeout, lost or cut answer | SubmissionOutcomeUnknown: may have taken effect, not sent again in that run | the same |
 * | restart of the workflow ID after a deploy | an earlier run's cardholder (its memo) is waited for; after an earlier run that scheduled it and did not learn the outcome (unknown, or lost mid-call), not sent again: OutcomeUnknown with the endpoint and workflow ID, for an operator to settle | the same |
 * | restart after a submission that was in fact REJECTED (issue 29, case 6) | not sent again, as above: the duplicate check ignores REJECTED cardholders, so a second one would be accepted and charged; a new submission is a caller's new request (a new workflow ID) | the same |
 */
import { recordAttemptOfRun, settleAttemptOfRun, type AttemptDeps } from './attempts';
import { isUnknownOutcomeType } from '../shared/outcome-unknown';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import { isProviderError } from '../provider/errors';
import type { KycSubmissionAnswer } from '../provider/answers';
import type { KycAutoRequest, KycFormRequest, KycManualRequest, UploadType } from '../provider-api';
import { DocumentRefused, type DocumentStore } from '../documents/store';
import { uploadDocument } from '../provider/uploads';
import { FailureType, type FieldErrors } from '../shared/failures';
import type { DocumentRef } from '../shared/types';
import { logExtraFields, providerCall } from './provider-call';

/** The provider's limit on a fileName. */
const MAX_FILE_NAME = 128;

export function createKycActivities({ provider, documents, temporal, openItemMinAskMs }: { provider: ProviderClient; documents: DocumentStore } & AttemptDeps) {
  /**
   * One submission, which the provider may charge its fee for: recorded as the run's attempt before
   * it is sent (issue 51), settled by the answer (accepted: charged) or by a refusal that says nothing was
   * sent; an unknown outcome leaves it to the flow, which opens it as its item.
   */
  const submitOnce = async (send: () => Promise<KycSubmissionAnswer>): Promise<KycSubmitted> => {
    await recordAttemptOfRun({ temporal, openItemMinAskMs }, {});
    const answer = await providerCall(async () => submitted(await send())).catch(async (err: unknown) => {
      if (refusedBeforeAnyEffect(err)) await settleAttemptOfRun(temporal, { verdict: 'not-moved', providerSaid: 'REFUSED' });
      throw err;
    });
    await settleAttemptOfRun(temporal, { verdict: 'moved', providerSaid: answer.kycStatus.slice(0, 64) });
    return answer;
  };

  return {
    /** null when the provider knows no such cardholder. */
    async getCardholder({ id }: { id: string }): Promise<{ id: string; kycStatus: string; reason?: string } | null> {
      return providerCall(async () => {
        try {
          const holder = await provider.getCardholder(id);
          return { id: holder.id ?? id, kycStatus: holder.kycStatus, ...(holder.reason === undefined ? {} : { reason: holder.reason }) };
        } catch (err) {
          if (isProviderError(err, 'NotFound')) return null;
          throw err;
        }
      });
    },

    /**
     * Field → rule for every document that cannot be uploaded (not this applicant's, outside the
     * documents store, not a regular file, over 10 MB, bytes that are not its declared type): all
     * are checked before the first upload, so a bad one spends no upload request. The applicant is
     * the onboarding that asks, known by its workflow ID (the activity's, not its input's): a name
     * in another applicant's folder is refused `<field>.name`, before anything of it is read. Once
     * all pass, the handed-out folders among them become this onboarding's.
     */
    async inspectKycDocuments({ documents: refs }: { documents: Array<{ field: string; ref: DocumentRef }> }): Promise<FieldErrors> {
      const onboarding = onboardingOfActivity();
      const errors: FieldErrors = {};
      const refuse = (field: string, refused: DocumentRefused) => (errors[refused.ofName ? `${field}.name` : field] = refused.rule);
      for (const { field, ref } of refs) {
        const refused = await documents.inspect(storeName(ref), ref.contentType, onboarding);
        if (refused) refuse(field, refused);
      }
      if (Object.keys(errors).length > 0) return errors;
      for (const { field, ref } of refs) {
        const refused = await documents.claim(storeName(ref), onboarding);
        if (refused) refuse(field, refused);
      }
      return errors;
    },

    /** Uploads one document (a fresh presigned URL per attempt; an expired one is renewed once) and returns its fileToken. */
    async uploadKycDocument({ ref, type }: { ref: DocumentRef; type: UploadType }): Promise<string> {
      return providerCall(async () => {
        const bytes = await readDocument(documents, ref, onboardingOfActivity());
        const fileName = ref.fileName ?? storeName(ref).split('/').pop()!.slice(-MAX_FILE_NAME);
        return uploadDocument(provider, { fileName, contentType: ref.contentType, type, bytes });
      });
    },

    /**
     * One POST of the form; Temporal must not retry it on its own (the endpoint takes no
     * idempotency key): the workflow decides from the failure whether it may have taken effect.
     */
    async submitKycForm({ form }: { form: KycFormRequest }): Promise<KycSubmitted> {
      return submitOnce(() => provider.submitKycForm(form));
    },

    /** The deprecated manual submission; like the form, exactly once per try. */
    async submitKycManual({ body }: { body: KycManualRequest }): Promise<KycSubmitted> {
      return submitOnce(() => provider.submitKycManual(body));
    },

    /** The hosted flow: the provider's page (verificationUrl) is where the person verifies. */
    async startHostedKyc({ body }: { body: KycAutoRequest }): Promise<KycSubmitted> {
      logExtraFields('startHostedKyc', body.extra);
      return submitOnce(() => provider.startHostedKyc(body));
    },
  };
}

export interface KycSubmitted {
  id: string;
  kycStatus: string;
  verificationUrl?: string;
}

/** The spec: a new submission is always PENDING. */
function submitted(answer: KycSubmissionAnswer): KycSubmitted {
  return { id: answer.id, kycStatus: answer.kycStatus ?? 'PENDING', ...(answer.verificationUrl ? { verificationUrl: answer.verificationUrl } : {}) };
}

/** A run from before the documents store passed `path`: the store judges it as a name, and refuses any path on a worker. */
function storeName(ref: DocumentRef): string {
  return ref.name ?? (ref as { path?: string }).path ?? '';
}

/** The onboarding an activity runs for: its workflow's ID, as the server tells the worker (a caller cannot set it in the input). */
function onboardingOfActivity(): string {
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (!workflowId) throw ApplicationFailure.create({ type: FailureType.ValidationFailed, message: 'KYC documents are read only for an onboarding workflow', nonRetryable: true });
  return workflowId;
}

/** The bytes, checked again as they are read (the document may have changed since the inspection): a bad one is not retried. */
async function readDocument(documents: DocumentStore, ref: DocumentRef, onboarding: string): Promise<Buffer> {
  try {
    return await documents.read(storeName(ref), ref.contentType, onboarding);
  } catch (err) {
    if (!(err instanceof DocumentRefused)) throw err;
    throw ApplicationFailure.create({ type: FailureType.ValidationFailed, message: err.message, nonRetryable: true, details: [{ errors: { [err.ofName ? 'document.name' : 'document']: err.rule } }] });
  }
}

/** A refusal that says the provider took nothing: definitive, and not one whose details say it may have taken effect. */
function refusedBeforeAnyEffect(err: unknown): boolean {
  if (!(err instanceof ApplicationFailure) || err.nonRetryable !== true) return false;
  return !(err.details ?? []).some((d) => (d as { mayHaveTakenEffect?: unknown } | null)?.mayHaveTakenEffect === true) && !isUnknownOutcomeType(err.type);
}
