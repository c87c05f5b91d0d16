/**
 * KYC activities: documents read from the filesystem the workers share (their bytes never
 * enter workflow history), uploaded for single-use fileTokens; the form submission; and the
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
 * | restart of the workflow ID after a deploy | an earlier run's cardholder (its memo) is waited for; after an earlier run that scheduled it and did not learn the outcome (unknown, or lost mid-call), not sent again: OutcomeUnknown with the endpoint and workflow ID, for an operator to settle (marker kyc-restart-never-resubmits; before it, sent again) | the same (marker kyc-restart-never-resubmits; before it, hosted-kyc-at-most-once refused after an unknown outcome only) |
 * | restart after a submission that was in fact REJECTED (issue 29, case 6) | not sent again, as above: the duplicate check ignores REJECTED cardholders, so a second one would be accepted and charged; a new submission is a caller's new request (a new workflow ID) | the same |
 */
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import { isProviderError } from '../provider/errors';
import type { KycSubmissionAnswer } from '../provider/answers';
import type { KycAutoRequest, KycFormRequest, KycManualRequest, UploadType } from '../provider/api';
import { MAX_UPLOAD_BYTES, uploadDocument } from '../provider/uploads';
import { FailureType, type FieldErrors } from '../shared/failures';
import type { DocumentRef } from '../shared/types';
import { logExtraFields, providerCall } from './provider-call';

/** The provider's limit on a fileName. */
const MAX_FILE_NAME = 128;

export function createKycActivities({ provider }: { provider: ProviderClient }) {
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
     * Field → rule for every document that cannot be uploaded (missing, over 10 MB, the spec's
     * limit): all are checked before the first upload, so a bad one spends no upload request.
     * An empty file is the provider's to judge (the spec states no minimum).
     */
    async inspectKycDocuments({ documents }: { documents: Array<{ field: string; path: string }> }): Promise<FieldErrors> {
      const errors: FieldErrors = {};
      for (const doc of documents) {
        const rule = await documentRule(doc.path);
        if (rule) errors[doc.field] = rule;
      }
      return errors;
    },

    /** Uploads one document (a fresh presigned URL per attempt; an expired one is renewed once) and returns its fileToken. */
    async uploadKycDocument({ ref, type }: { ref: DocumentRef; type: UploadType }): Promise<string> {
      return providerCall(async () => {
        const bytes = await readDocument(ref.path);
        const fileName = ref.fileName ?? basename(ref.path).slice(-MAX_FILE_NAME);
        return uploadDocument(provider, { fileName, contentType: ref.contentType, type, bytes });
      });
    },

    /**
     * One POST of the form; Temporal must not retry it on its own (the endpoint takes no
     * idempotency key): the workflow decides from the failure whether it may have taken effect.
     */
    async submitKycForm({ form }: { form: KycFormRequest }): Promise<KycSubmitted> {
      return providerCall(async () => submitted(await provider.submitKycForm(form)));
    },

    /** The deprecated manual submission; like the form, exactly once per try. */
    async submitKycManual({ body }: { body: KycManualRequest }): Promise<KycSubmitted> {
      return providerCall(async () => submitted(await provider.submitKycManual(body)));
    },

    /** The hosted flow: the provider's page (verificationUrl) is where the person verifies. */
    async startHostedKyc({ body }: { body: KycAutoRequest }): Promise<KycSubmitted> {
      logExtraFields('startHostedKyc', body.extra);
      return providerCall(async () => submitted(await provider.startHostedKyc(body)));
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

/** Why a file cannot be uploaded, or undefined when it can. */
async function documentRule(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return 'must be a readable file';
    if (info.size > MAX_UPLOAD_BYTES) return `must be a file of at most ${MAX_UPLOAD_BYTES} bytes`;
    return undefined;
  } catch {
    return 'must be a readable file';
  }
}

/** The bytes, once the file passed the same checks as inspectKycDocuments (it may have changed since): a bad file is not retried. */
async function readDocument(path: string): Promise<Buffer> {
  const rule = await documentRule(path);
  if (rule) {
    throw ApplicationFailure.create({ type: FailureType.ValidationFailed, message: `document ${rule}`, nonRetryable: true, details: [{ errors: { document: rule } }] });
  }
  return readFile(path);
}
