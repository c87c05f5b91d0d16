/**
 * onboardCardholder: checks the KYC submission against the provider's rules, checks every
 * document (readable, at most 10 MB) before the first upload, uploads each for its fileToken,
 * submits, and waits for the review, which the cardholder's entity workflow tells it (from the
 * CARDHOLDER_KYC_STATUS webhook, or its polls of GET /kyc/cardholders/{id}). REJECTED is a result.
 *
 * Three modes: the form (default); the deprecated manual submission (identity and PDF reports;
 * it logs the deprecation and returns it in `warnings`); and the hosted flow, whose page
 * (`verificationUrl`) the `onboarding` query answers as soon as it is known.
 *
 * The form submission takes no idempotency key and the provider offers no lookup by identity,
 * so nothing can reconcile a submission whose answer was lost. Hence:
 * - the submit activity runs exactly once per try (maximumAttempts 1); the workflow tries
 *   again only after a failure that certainly did not reach the provider, and ends
 *   SubmissionOutcomeUnknown after one that may have (a 500, a timeout, a lost worker);
 * - the outcome is recorded in the workflow's memo, and a repeated start with the same
 *   workflow ID reads earlier runs' memos (and whether they scheduled a submission) first: a
 *   known cardholder is waited for, not submitted again; after an outcome no run could learn
 *   (unknown, or a run lost mid-submission) it is not submitted again either, and the run ends
 *   OutcomeUnknown for an operator to settle (marker kyc-restart-never-resubmits). The
 *   provider's duplicate check cannot stand in: it ignores REJECTED cardholders, so a restart
 *   after a REJECTED submission would charge a second fee. A new submission is a new workflow ID.
 *   (Before the marker: after an unknown outcome it submitted, and DuplicateCardholder then said
 *   that the earlier submission evidently went through.)
 */
import { CancellationScope, log, patched, setHandler, sleep, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { KycSubmitted } from '../activities/kyc';
import { describeErrors, hasErrors } from '../shared/card-rules';
import { FailureType, isFailureType, type FieldErrors } from '../shared/failures';
import {
  MANUAL_KYC_DEPRECATION, documentSlots, hostedKycBody, kycFormBody, kycModeOf, manualDocumentSlots, manualKycBody, onboardErrors,
  type DocumentSlot,
} from '../shared/kyc-rules';
import { onboardingQuery } from '../shared/messages';
import { hasCallerFieldErrors, withoutCallerFieldErrors } from '../provider-api/rules';
import { FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import type { HostedKycInput, ManualKycInput, OnboardCardholderInput, OnboardCardholderResult, OnboardInput, OnboardingProgress } from '../shared/types';
import { awaitOutcome } from './lib/await-outcome';
import { applicationCause, failWith, providerCalls, unmeteredActivities, type ProviderCalls } from './lib/provider';
import { declareVersioning } from './lib/versioning';

/** Memo key under which a run records what became of its submission. */
export const KYC_SUBMISSION_MEMO = 'kycSubmission';

interface SubmissionRecord {
  cardholderId?: string;
  verificationUrl?: string;
  /** The submission failed in a way that may have taken effect. */
  outcomeUnknown?: boolean;
  /** The submission failed in a way that certainly did not take effect (marker kyc-restart-never-resubmits). */
  notSubmitted?: boolean;
}

/** What earlier runs left: a cardholder to wait for, or whether one of them may have submitted. */
interface EarlierSubmission extends SubmissionRecord {
  /** Some earlier run scheduled a submission whose outcome it did not learn (recorded only under the marker). */
  mayHaveSubmitted?: boolean;
}

/** The activities that submit (and may charge the fee): one per mode. */
const SUBMIT_ACTIVITIES = ['submitKycForm', 'submitKycManual', 'startHostedKyc'];

/** Tries of a submission whose failures certainly did not reach the provider (refused connection, reused nonce). */
const SUBMIT_TRIES = 5;

export async function onboardCardholder(input: OnboardInput): Promise<OnboardCardholderResult> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'onboardCardholder' }]);
  const progress: OnboardingProgress = { mode: kycModeOf(input), warnings: [] };
  setHandler(onboardingQuery, () => progress);
  // A run from before the documents store keeps its rule, so that its history replays; the store refuses its paths.
  let errors = onboardErrors(input, !patched(KYC_DOCUMENTS_STORE_PATCH));
  // Likewise a hosted run from before its redirectUrl and extra were allow-listed (the provider client refuses them all the same).
  if (hasCallerFieldErrors(errors) && !patched(HOSTED_KYC_FIELDS_ALLOWLISTED_PATCH)) errors = withoutCallerFieldErrors(errors);
  assertValid(errors);
  if (progress.mode === 'manual') {
    log.warn(MANUAL_KYC_DEPRECATION);
    progress.warnings.push(MANUAL_KYC_DEPRECATION);
  }
  // Asked before the lookup it chooses: a run that took the new lookup holds the marker before it.
  const neverResubmit = patched(KYC_RESTART_NEVER_RESUBMITS_PATCH);
  const earlier = neverResubmit ? await earlierSubmissions() : await earlierSubmission();
  if (neverResubmit) {
    if (!earlier.cardholderId && earlier.mayHaveSubmitted) refuseResubmission(progress.mode);
  } else if (!earlier.cardholderId && earlier.outcomeUnknown && progress.mode === 'hosted' && patched(HOSTED_KYC_ONCE_PATCH)) refuseHostedResubmission();
  const known = earlier.cardholderId
    ? { id: earlier.cardholderId, verificationUrl: earlier.verificationUrl }
    : await submit(input, earlier.outcomeUnknown === true, neverResubmit);
  const cardholderId = known.id;
  Object.assign(progress, { cardholderId, ...(known.verificationUrl ? { verificationUrl: known.verificationUrl } : {}) });
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: 'PENDING' }]);

  const outcome = await awaitOutcome({ kind: 'kyc', entityId: cardholderId, timings: input.timings });
  if (!outcome) {
    failWith(FailureType.KycReviewTimedOut, `cardholder ${cardholderId} was still PENDING when the deadline passed`, [{ cardholderId }]);
  }
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: outcome.status }]);
  const reason = outcome.data.reason;
  return {
    id: cardholderId,
    kycStatus: outcome.status as OnboardCardholderResult['kycStatus'],
    ...(typeof reason === 'string' ? { reason } : {}),
    ...(progress.verificationUrl ? { verificationUrl: progress.verificationUrl } : {}),
    ...(progress.warnings.length > 0 ? { warnings: progress.warnings } : {}),
  };
}

/** docs/versioning.md: documents are names inside the workers' documents store, never paths (marker-less runs named paths). */
export const KYC_DOCUMENTS_STORE_PATCH = 'kyc-documents-store';

/**
 * docs/versioning.md: a hosted onboarding whose redirectUrl is not https (or loopback http) or whose
 * `extra` names a field outside HOSTED_KYC_EXTRA_FIELDS fails ValidationFailed before any call;
 * before, it was sent. `patched()` is called only when it does.
 */
export const HOSTED_KYC_FIELDS_ALLOWLISTED_PATCH = 'hosted-kyc-fields-allowlisted';

/**
 * docs/versioning.md: a hosted submission carries no identity, so no duplicate check can stop a
 * second one (and its fee): after an earlier run's unknown outcome a restart does not submit again.
 */
export const HOSTED_KYC_ONCE_PATCH = 'hosted-kyc-at-most-once';

function refuseHostedResubmission(): never {
  return failWith(
    FailureType.OutcomeUnknown,
    'an earlier run of this workflow ID sent the hosted KYC request (POST /kyc/cardholders/auto) and could not learn its outcome; ' +
      'it is not sent again, since the provider could charge a second fee and offers no lookup without the cardholder id. Find the cardholder at the provider, or start under a new workflow ID to submit anew',
    [{ endpoint: 'POST /kyc/cardholders/auto', workflowId: workflowInfo().workflowId, mayHaveTakenEffect: true }],
  );
}

/**
 * docs/versioning.md: a restart of the workflow ID never submits again after an earlier run that
 * may have submitted and did not learn the outcome (unknown, or lost mid-submission), in any mode:
 * the duplicate check ignores REJECTED cardholders, so a second submission could charge a second fee.
 */
export const KYC_RESTART_NEVER_RESUBMITS_PATCH = 'kyc-restart-never-resubmits';

/**
 * docs/versioning.md: a cancellation (a Nexus caller's, through the onboarding relay; an operator's)
 * lets a submission in flight finish and record its cardholder before the flow ends cancelled: a
 * restart under the key then waits for that cardholder's review instead of ending OutcomeUnknown.
 */
export const KYC_SUBMISSION_OUTLIVES_CANCEL_PATCH = 'kyc-submission-outlives-cancel';

const SUBMIT_ENDPOINT = { form: 'POST /kyc/cardholders/form', manual: 'POST /kyc/cardholders/manual', hosted: 'POST /kyc/cardholders/auto' } as const;

function refuseResubmission(mode: OnboardingProgress['mode']): never {
  const endpoint = SUBMIT_ENDPOINT[mode];
  return failWith(
    FailureType.OutcomeUnknown,
    `an earlier run of this workflow ID sent the KYC submission (${endpoint}) and could not learn its outcome; a restart does not send it again, ` +
      'since the provider takes no key, offers no lookup without the cardholder id, and accepts a second submission (and its fee) once the first is REJECTED. ' +
      'Find the cardholder at the provider to settle it, or submit anew under a new workflow ID (a new request)',
    [{ endpoint, workflowId: workflowInfo().workflowId, mayHaveTakenEffect: true }],
  );
}

function assertValid(errors: FieldErrors): void {
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid KYC submission: ${describeErrors(errors)}`, [{ errors }]);
}

/** What earlier runs with this workflow ID recorded, the newest that knows a cardholder first. */
async function earlierSubmission(): Promise<EarlierSubmission> {
  const { workflowId, runId } = workflowInfo();
  const records = (await unmeteredActivities.earlierRunMemos({ workflowId, runId, key: KYC_SUBMISSION_MEMO })) as SubmissionRecord[];
  return records.find((r) => typeof r?.cardholderId === 'string') ?? { outcomeUnknown: records.some((r) => r?.outcomeUnknown === true) };
}

/**
 * What earlier runs with this workflow ID recorded, and whether one of them may have submitted:
 * an unknown outcome, or a submission scheduled with nothing recorded after it (a run lost mid-call).
 */
async function earlierSubmissions(): Promise<EarlierSubmission> {
  const { workflowId, runId } = workflowInfo();
  const runs = await unmeteredActivities.earlierRunRecords({ workflowId, runId, key: KYC_SUBMISSION_MEMO, activityTypes: SUBMIT_ACTIVITIES });
  const records = runs.map((r) => (r.value ?? {}) as SubmissionRecord);
  const known = records.find((r) => typeof r.cardholderId === 'string');
  if (known) return known;
  const mayHaveSubmitted = runs.some((r, i) => records[i].outcomeUnknown === true || (r.scheduled && records[i].notSubmitted !== true));
  return { mayHaveSubmitted };
}

type SubmitCall = (acts: ProviderCalls<'general'>) => Promise<KycSubmitted>;

/** Documents checked, uploaded, submission sent once; the cardholder's id, recorded in the memo. */
async function submit(input: OnboardInput, earlierOutcomeUnknown: boolean, recordNotSubmitted: boolean): Promise<KycSubmitted> {
  const call = await submission(input);
  const once = () => submitOnce(call, earlierOutcomeUnknown, recordNotSubmitted);
  const submitted = patched(KYC_SUBMISSION_OUTLIVES_CANCEL_PATCH) ? await CancellationScope.nonCancellable(once) : await once();
  const record: SubmissionRecord = { cardholderId: submitted.id, ...(submitted.verificationUrl ? { verificationUrl: submitted.verificationUrl } : {}) };
  upsertMemo({ [KYC_SUBMISSION_MEMO]: record });
  return submitted;
}

/** The mode's submission, its documents uploaded first. */
async function submission(input: OnboardInput): Promise<SubmitCall> {
  const mode = kycModeOf(input);
  if (mode === 'hosted') {
    const body = hostedKycBody(input as HostedKycInput);
    return (acts) => acts.startHostedKyc({ body });
  }
  if (mode === 'manual') {
    const tokens = await uploadAll(manualDocumentSlots(input as ManualKycInput));
    const body = manualKycBody(input as ManualKycInput, tokens);
    return (acts) => acts.submitKycManual({ body });
  }
  const form = kycFormBody(input as OnboardCardholderInput, await uploadAll(documentSlots((input as OnboardCardholderInput).documents)));
  return (acts) => acts.submitKycForm({ form });
}

/** Every document checked, then uploaded for its fileToken (keyed by its place in the input). */
async function uploadAll(slots: DocumentSlot[]): Promise<Record<string, string>> {
  assertValid(await unmeteredActivities.inspectKycDocuments({ documents: slots.map((s) => ({ field: s.field, ref: s.ref })) }));
  const general = providerCalls('general');
  const tokens = await Promise.all(slots.map(async (slot) => [slot.field, await general.uploadKycDocument({ ref: slot.ref, type: slot.type })] as const));
  return Object.fromEntries(tokens);
}

async function submitOnce(call: SubmitCall, earlierOutcomeUnknown: boolean, recordNotSubmitted: boolean): Promise<KycSubmitted> {
  try {
    return await submitWithSafeRetries(call);
  } catch (err) {
    const cause = applicationCause(err);
    if (mayHaveTakenEffect(err)) {
      upsertMemo({ [KYC_SUBMISSION_MEMO]: { outcomeUnknown: true } satisfies SubmissionRecord });
      failWith(
        FailureType.SubmissionOutcomeUnknown,
        `the KYC submission failed (${cause?.type ?? 'no answer'}) in a way that may have taken effect; it was not repeated, because the provider offers no way to reconcile it. ` +
          (recordNotSubmitted
            ? 'A new start with the same workflow ID does not submit again (it ends OutcomeUnknown); find the cardholder at the provider, or submit anew under a new workflow ID'
            : 'A new start with the same workflow ID submits again: the provider then refuses a duplicate (DuplicateCardholder) if the first one went through'),
        [{ cause: cause?.type }],
      );
    }
    // A restart may submit again only after a run that says its submission did not take effect.
    if (recordNotSubmitted) upsertMemo({ [KYC_SUBMISSION_MEMO]: { notSubmitted: true } satisfies SubmissionRecord });
    if (cause?.type === FailureType.DuplicateCardholder) failWith(cause.type, duplicateMessage(earlierOutcomeUnknown), cause.details ?? []);
    if (isFailureType(cause?.type)) failWith(cause.type, cause.message, cause.details ?? []);
    throw err;
  }
}

/** The submit activity is never retried by Temporal; only a failure known not to have reached the provider is tried again here. */
async function submitWithSafeRetries(call: SubmitCall): Promise<KycSubmitted> {
  const once = providerCalls('general', { retry: { maximumAttempts: 1 }, rawFailures: true });
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(once);
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

// docs/versioning.md: waits days for the KYC review: it moves to each new build and keeps markers and replay tests.
declareVersioning('AUTO_UPGRADE', onboardCardholder);
