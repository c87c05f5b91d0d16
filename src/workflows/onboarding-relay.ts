/**
 * onboardingRelay: the asynchronous Nexus operation `onboardCardholder` (src/nexus, docs/nexus.md).
 * It runs on the Nexus service's queue, whose worker writes plain JSON: its result reaches the
 * caller's namespace as it is, through the operation's completion callback. So it holds nothing our
 * codec must keep: its input is the caller's key and the run of our onboarding it follows, its
 * result the onboarding's outcome (cardholder id, KYC status, the hosted page), its failure a type
 * and ids. The onboarding itself, with the applicant's identity, runs in our flow, encrypted.
 *
 * It looks at the onboarding at growing intervals (1 s to 2 min) rather than waiting in an activity:
 * a review takes days, and a waiting activity would hold one of the worker's slots all that time.
 *
 * Cancelling the caller's operation cancels the relay, and the relay cancels our onboarding: that
 * is safe (it moves no money; a submission in flight finishes and records its cardholder first,
 * and the same key later waits for that cardholder's review instead of submitting again). The
 * relay then waits for our flow to end: cancelled, or completed if the review came first.
 */
import { ActivityFailure, ApplicationFailure, CancellationScope, CancelledFailure, isCancellation, makeContinueAsNewFunc, proxyActivities, sleep } from '@temporalio/workflow';
import type { OnboardingSeen, RelayActivities } from '../nexus/relay-activities';
import type { OnboardCardholderResult } from '../shared/types';
import { declareVersioning } from './lib/versioning';
import { rollOverOptions, targetBuildChanged, wakeOnRollOver } from './lib/roll-over';

export interface OnboardingRelayInput {
  /** The caller's key: our onboarding flow is the one under it (the client's ID rule), and only such a flow is read. */
  idempotencyKey: string;
  /** The run it follows: a later run under the key (after this one ended) is another relay's. */
  runId: string;
  /** Our handler's signature over the key and the run (nexus/relay-token.ts): a relay started by anyone else reads nothing. */
  token: string;
  /** Looks made by earlier runs of this relay (continue-as-new), for the interval. */
  looks?: number;
  /** An earlier run of this relay was cancelled: this one cancels our onboarding and waits for it to end. */
  cancelling?: boolean;
}

const { lookAtOnboarding, cancelOnboarding } = proxyActivities<RelayActivities>({
  startToCloseTimeout: '1 minute',
  // Temporal unreachable from the worker is waited out, however long; what the flow ended with is final (relay-activities.ts).
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** A run's history stays small: it continues as new after this many looks (about 14 hours at the 2-minute interval). */
const LOOKS_PER_RUN = 400;

export async function onboardingRelay(input: OnboardingRelayInput): Promise<OnboardCardholderResult> {
  const seen = input.cancelling ? undefined : await untilEnded(input).catch((err: unknown) => (isCancellation(err) ? undefined : Promise.reject(err)));
  if (seen === CANCELLED) {
    // Cancelled by someone else (an operator): typed as the client types it (its submission may have been sent).
    throw ApplicationFailure.create({ type: 'FlowCancelled', message: `the onboarding under key ${input.idempotencyKey} was cancelled`, nonRetryable: true, details: [{ mayHaveTakenEffect: true, idempotencyKey: input.idempotencyKey }] });
  }
  if (seen !== undefined) return seen;
  // The caller cancelled (in this run, or in the run this one continued from).
  const ended = await CancellationScope.nonCancellable(async () => {
    await relayed(cancelOnboarding(input));
    return untilEnded({ ...input, cancelling: true });
  });
  if (ended === CANCELLED) throw new CancelledFailure(`the onboarding under key ${input.idempotencyKey} was cancelled`);
  return ended;
}

const CANCELLED = Symbol('cancelled');

/** Looks until the run ended: its outcome, or CANCELLED; continues as new (keeping `cancelling`) when the history has grown. */
async function untilEnded(input: OnboardingRelayInput): Promise<OnboardCardholderResult | typeof CANCELLED> {
  const first = input.looks ?? 0;
  wakeOnRollOver();
  for (let look = first; ; look++) {
    const seen: OnboardingSeen = await relayed(lookAtOnboarding(input));
    if (seen.state === 'completed') return seen.result;
    if (seen.state === 'cancelled') return CANCELLED;
    // Also onto a new target build, between looks (lib/roll-over.ts).
    if (look - first >= LOOKS_PER_RUN || targetBuildChanged()) await makeContinueAsNewFunc<typeof onboardingRelay>(rollOverOptions())({ ...input, looks: look + 1 });
    await sleep(Math.min(1000 * 2 ** look, 120_000));
  }
}

/** An activity's typed failure is the relay's own: the caller's innermost failure is the onboarding's type, as over the synchronous operations. */
async function relayed<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw err instanceof ActivityFailure && err.cause && !isCancellation(err) ? err.cause : err;
  }
}

// docs/versioning.md: waits as long as the onboarding it relays (days), pinned to each run's build; moves to a new one between looks.
declareVersioning('PINNED', onboardingRelay);
