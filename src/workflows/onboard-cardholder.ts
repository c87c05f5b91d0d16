/**
 * onboardCardholder: checks the KYC form against the provider's rules, checks every document
 * (readable, at most 10 MB) before the first upload, uploads each for its fileToken, submits
 * the form, and waits for the review: by the CARDHOLDER_KYC_STATUS webhook (through the
 * cardholder's entity workflow) or by polling GET /kyc/cardholders/{id}. REJECTED is a result.
 *
 * The form submission takes no idempotency key and the provider offers no lookup by identity,
 * so nothing can reconcile a submission whose answer was lost. Hence:
 * - the submit activity runs exactly once per try (maximumAttempts 1); the workflow tries
 *   again only after a failure that certainly did not reach the provider, and ends
 *   SubmissionOutcomeUnknown after one that may have (a 500, a timeout, a lost worker);
 * - the outcome is recorded in the workflow's memo, and a repeated start with the same
 *   workflow ID reads earlier runs' memos first: a known cardholder is waited for, not
 *   submitted again; after an unknown outcome it submits, and a DuplicateCardholder answer
 *   then says that the earlier submission evidently went through.
 */
import { sleep, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { KycFormRequest } from '../provider/schemas';
import { describeErrors, hasErrors } from '../shared/card-rules';
import { FailureType, type FieldErrors } from '../shared/failures';
import { documentSlots, kycFormBody, onboardCardholderErrors } from '../shared/kyc-rules';
import { FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import type { OnboardCardholderInput, OnboardCardholderResult } from '../shared/types';
import { awaitOutcome } from './lib/await-outcome';
import { applicationCause, failWith, localActivities, providerActivities, typedFailures, withRateBudget } from './lib/provider';

/** Memo key under which a run records what became of its submission. */
export const KYC_SUBMISSION_MEMO = 'kycSubmission';

interface SubmissionRecord {
  cardholderId?: string;
  /** The submission failed in a way that may have taken effect. */
  outcomeUnknown?: boolean;
}

/** Tries of a submission whose failures certainly did not reach the provider (refused connection, reused nonce). */
const SUBMIT_TRIES = 5;

export async function onboardCardholder(input: OnboardCardholderInput): Promise<OnboardCardholderResult> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'onboardCardholder' }]);
  assertValid(onboardCardholderErrors(input));
  const earlier = await earlierSubmission();
  const cardholderId = earlier.cardholderId ?? (await submit(input, earlier.outcomeUnknown === true));
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: 'PENDING' }]);

  const general = providerActivities('general');
  const outcome = await awaitOutcome({
    kind: 'kyc',
    entityId: cardholderId,
    poll: async () => {
      const holder = await typedFailures(() => withRateBudget(() => general.getCardholder({ id: cardholderId })));
      if (!holder) failWith(FailureType.NotFound, `the provider knows no cardholder ${cardholderId}`, [{ cardholderId }]);
      return { status: holder.kycStatus, data: holder as unknown as Record<string, unknown> };
    },
    timings: input.timings,
  });
  if (!outcome) {
    failWith(FailureType.KycReviewTimedOut, `cardholder ${cardholderId} was still PENDING when the deadline passed`, [{ cardholderId }]);
  }
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: outcome.status }]);
  const reason = outcome.data.reason;
  return { id: cardholderId, kycStatus: outcome.status as OnboardCardholderResult['kycStatus'], ...(typeof reason === 'string' ? { reason } : {}) };
}

function assertValid(errors: FieldErrors): void {
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid KYC submission: ${describeErrors(errors)}`, [{ errors }]);
}

/** What earlier runs with this workflow ID recorded, the newest that knows a cardholder first. */
async function earlierSubmission(): Promise<SubmissionRecord> {
  const { workflowId, runId } = workflowInfo();
  const records = (await localActivities.earlierRunMemos({ workflowId, runId, key: KYC_SUBMISSION_MEMO })) as SubmissionRecord[];
  return records.find((r) => typeof r?.cardholderId === 'string') ?? { outcomeUnknown: records.some((r) => r?.outcomeUnknown === true) };
}

/** Documents checked, uploaded, form submitted once; the cardholder's id, recorded in the memo. */
async function submit(input: OnboardCardholderInput, earlierOutcomeUnknown: boolean): Promise<string> {
  const slots = documentSlots(input.documents);
  assertValid(await localActivities.inspectKycDocuments({ documents: slots.map((s) => ({ field: s.field, path: s.ref.path })) }));

  const general = providerActivities('general');
  const tokens = await Promise.all(
    slots.map(async (slot) => [slot.field, await typedFailures(() => withRateBudget(() => general.uploadKycDocument({ ref: slot.ref, type: slot.type })))] as const),
  );
  const form = kycFormBody(input, Object.fromEntries(tokens));
  const { id } = await submitForm(form, earlierOutcomeUnknown);
  upsertMemo({ [KYC_SUBMISSION_MEMO]: { cardholderId: id } satisfies SubmissionRecord });
  return id;
}

async function submitForm(form: KycFormRequest, earlierOutcomeUnknown: boolean): Promise<{ id: string }> {
  try {
    return await submitWithSafeRetries(form);
  } catch (err) {
    const cause = applicationCause(err);
    if (mayHaveTakenEffect(err)) {
      upsertMemo({ [KYC_SUBMISSION_MEMO]: { outcomeUnknown: true } satisfies SubmissionRecord });
      failWith(
        FailureType.SubmissionOutcomeUnknown,
        `the KYC submission failed (${cause?.type ?? 'no answer'}) in a way that may have taken effect; it was not repeated, because the provider offers no way to reconcile it. ` +
          'A new start with the same workflow ID submits again: the provider then refuses a duplicate (DuplicateCardholder) if the first one went through',
        [{ cause: cause?.type }],
      );
    }
    if (cause?.type === FailureType.DuplicateCardholder) failWith(cause.type, duplicateMessage(earlierOutcomeUnknown), cause.details ?? []);
    if (cause?.type) failWith(cause.type, cause.message, cause.details ?? []);
    throw err;
  }
}

/** The submit activity is never retried by Temporal; only a failure known not to have reached the provider is tried again here. */
async function submitWithSafeRetries(form: KycFormRequest): Promise<{ id: string }> {
  const once = providerActivities('general', { retry: { maximumAttempts: 1 } });
  for (let attempt = 1; ; attempt++) {
    try {
      return await withRateBudget(() => once.submitKycForm({ form }));
    } catch (err) {
      if (attempt >= SUBMIT_TRIES || mayHaveTakenEffect(err) || applicationCause(err)?.nonRetryable) throw err;
      await sleep(1000 * 2 ** (attempt - 1));
    }
  }
}

/** Only a provider failure that says so is known not to have taken effect; a timeout or a lost worker may have. */
function mayHaveTakenEffect(err: unknown): boolean {
  const details = applicationCause(err)?.details?.[0] as { mayHaveTakenEffect?: boolean } | undefined;
  return details?.mayHaveTakenEffect !== false;
}

function duplicateMessage(earlierOutcomeUnknown: boolean): string {
  return earlierOutcomeUnknown
    ? 'a cardholder with this idType and idNumber is already PENDING or APPROVED: the submission of an earlier run of this workflow ID, whose answer was lost, evidently went through; the provider offers no lookup of its id'
    : 'a cardholder with this idType and idNumber is already PENDING or APPROVED; the provider accepts the same identity again only once it is REJECTED';
}
