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
 *   OutcomeUnknown for an operator to settle. The provider's duplicate check cannot stand in: it
 *   ignores REJECTED cardholders, so a restart after a REJECTED submission would charge a second
 *   fee. A new submission is a new workflow ID.
 */
import { CancellationScope, log, setHandler, sleep, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { KycSubmitted } from '../activities/kyc';
import { describeErrors, hasErrors } from '../shared/card-rules';
import { FailureType, isFailureType, type FieldErrors } from '../shared/failures';
import {
  MANUAL_KYC_DEPRECATION, documentSlots, hostedKycBody, kycFormBody, kycModeOf, manualDocumentSlots, manualKycBody, onboardErrors,
  type DocumentSlot,
} from '../shared/kyc-rules';
import { onboardingQuery } from '../shared/messages';
import { FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import type { HostedKycInput, ManualKycInput, OnboardCardholderInput, OnboardCardholderResult, OnboardInput, OnboardingProgress } from '../shared/types';
import { awaitOutcome } from './lib/await-outcome';
import { applicationCause, failWith, providerCalls, unmeteredActivities, type ProviderCalls } from './lib/provider';
import { declareVersioning } from './lib/versioning';
import { carriedFieldErrors, carriedOver, rollOverWith } from './lib/roll-over';

/** Memo key under which a run records what became of its submission. */
export const KYC_SUBMISSION_MEMO = 'kycSubmission';

interface SubmissionRecord {
  cardholderId?: string;
  verificationUrl?: string;
  /** The submission failed in a way that may have taken effect. */
  outcomeUnknown?: boolean;
  /** The submission failed in a way that certainly did not take effect: a restart may submit. */
  notSubmitted?: boolean;
}

/** What earlier runs left: a cardholder to wait for, or whether one of them may have submitted. */
interface EarlierSubmission extends SubmissionRecord {
  /** Some earlier run scheduled a submission whose outcome it did not learn. */
  mayHaveSubmitted?: boolean;
}

/** The activities that submit (and may charge the fee): one per mode. */
const SUBMIT_ACTIVITIES = ['submitKycForm', 'submitKycManual', 'startHostedKyc'];

/** Tries of a submission whose failures certainly did not reach the provider (refused connection, reused nonce). */
const SUBMIT_TRIES = 5;

/**
 * Where a review's wait stands, handed across a continue-as-new onto a new build (lib/roll-over.ts):
 * the next run waits for the same cardholder until the same deadline, and carries none of the
 * applicant's identity or documents, which it no longer needs.
 */
export interface AwaitingReview {
  progress: OnboardingProgress & { cardholderId: string };
  deadlineAt: number;
}

/** The flow's own input: a caller's submission, or, from the run before it, only the wait it continues. */
export type OnboardFlowInput = OnboardInput | { timings?: OnboardInput['timings']; awaiting: AwaitingReview };

export async function onboardCardholder(input: OnboardFlowInput): Promise<OnboardCardholderResult> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'onboardCardholder' }]);
  const awaiting = carriedOver((input as { awaiting?: AwaitingReview } | undefined)?.awaiting);
  const progress = awaiting?.progress ?? (await submitted(input as OnboardInput));
  const cardholderId = progress.cardholderId;
  setHandler(onboardingQuery, () => progress);
  const outcome = await awaitOutcome({
    kind: 'kyc', entityId: cardholderId, timings: input?.timings, deadlineAt: awaiting?.deadlineAt,
    rollOver: (deadlineAt) => rollOverWith<typeof onboardCardholder>({ timings: input?.timings, awaiting: { progress, deadlineAt } }),
  });
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

/** The submission checked and sent once (or an earlier run's cardholder found): the onboarding's progress, its cardholder known. */
async function submitted(input: OnboardInput): Promise<OnboardingProgress & { cardholderId: string }> {
  const progress: OnboardingProgress = { mode: kycModeOf(input), warnings: [] };
  setHandler(onboardingQuery, () => progress);
  // A caller's `awaiting` is not the run before's: refused as a field like any other.
  assertValid({ ...onboardErrors(input), ...carriedFieldErrors(input, 'awaiting', 'an onboarding') });
  if (progress.mode === 'manual') {
    log.warn(MANUAL_KYC_DEPRECATION);
    progress.warnings.push(MANUAL_KYC_DEPRECATION);
  }
  const earlier = await earlierSubmissions();
  if (!earlier.cardholderId && earlier.mayHaveSubmitted) refuseResubmission(progress.mode);
  const known = earlier.cardholderId ? { id: earlier.cardholderId, verificationUrl: earlier.verificationUrl } : await submit(input);
  Object.assign(progress, { cardholderId: known.id, ...(known.verificationUrl ? { verificationUrl: known.verificationUrl } : {}) });
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: 'PENDING' }]);
  return progress as OnboardingProgress & { cardholderId: string };
}

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
async function submit(input: OnboardInput): Promise<KycSubmitted> {
  const call = await submission(input);
  // A cancellation (a Nexus caller's, through the onboarding relay; an operator's) lets a submission in flight finish and
  // record its cardholder before the flow ends cancelled: a restart under the key then waits for that cardholder's review.
  const submitted = await CancellationScope.nonCancellable(() => submitOnce(call));
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

async function submitOnce(call: SubmitCall): Promise<KycSubmitted> {
  try {
    return await submitWithSafeRetries(call);
  } catch (err) {
    const cause = applicationCause(err);
    if (mayHaveTakenEffect(err)) {
      upsertMemo({ [KYC_SUBMISSION_MEMO]: { outcomeUnknown: true } satisfies SubmissionRecord });
      failWith(
        FailureType.SubmissionOutcomeUnknown,
        `the KYC submission failed (${cause?.type ?? 'no answer'}) in a way that may have taken effect; it was not repeated, because the provider offers no way to reconcile it. ` +
          'A new start with the same workflow ID does not submit again (it ends OutcomeUnknown); find the cardholder at the provider, or submit anew under a new workflow ID',
        [{ cause: cause?.type }],
      );
    }
    // A restart may submit again only after a run that says its submission did not take effect.
    upsertMemo({ [KYC_SUBMISSION_MEMO]: { notSubmitted: true } satisfies SubmissionRecord });
    if (cause?.type === FailureType.DuplicateCardholder) failWith(cause.type, DUPLICATE_MESSAGE, cause.details ?? []);
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

const DUPLICATE_MESSAGE = 'a cardholder with this idType and idNumber is already PENDING or APPROVED; the provider accepts the same identity again only once it is REJECTED';

// docs/versioning.md: waits days for the KYC review, pinned to each run's build; moves to a new build at a continue-as-new while it waits (lib/roll-over.ts).
declareVersioning('PINNED', onboardCardholder);
