/**
 * onboardingRelay: the asynchronous Nexus operation `onboardCardholder` (src/nexus, docs/nexus.md).
 * It runs on the Nexus service's queue, whose worker writes plain JSON: its result reaches the
 * caller's namespace as it is, through the operation's completion callback. So it holds nothing our
 * codec must keep: its input is our onboarding flow's workflow ID (the caller's key), its result the
 * onboarding's outcome (cardholder id, KYC status, the hosted page). The onboarding itself, with
 * the applicant's identity, runs in our flow, encrypted; the relay only waits for it.
 *
 * Cancelling the caller's operation cancels the relay, and the relay cancels our onboarding: that
 * is safe (it moves no money; a submission in flight finishes and records its cardholder first,
 * and the same key later waits for that cardholder's review instead of submitting again). The
 * relay then waits for our flow to end: cancelled, or completed if the review came first.
 */
import { ActivityFailure, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../nexus/relay-activities';
import type { OnboardCardholderResult } from '../shared/types';
import { declareVersioning } from './lib/versioning';

export interface OnboardingRelayInput {
  /** Our onboardCardholder flow (its ID follows from the caller's key). */
  workflowId: string;
}

/** The wait lasts as long as the review (days): the activity heartbeats, and a lost worker's wait is taken up by another. */
const waiting = proxyActivities<RelayActivities>({
  startToCloseTimeout: '60 days',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function onboardingRelay(input: OnboardingRelayInput): Promise<OnboardCardholderResult> {
  try {
    return await relayed(waiting.awaitOnboarding(input));
  } catch (err) {
    if (!isCancellation(err)) throw err;
    const ended = await CancellationScope.nonCancellable(() => relayed(waiting.cancelOnboarding(input)));
    if (ended.cancelled) throw err;
    return ended.result;
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

// docs/versioning.md: waits as long as the onboarding it relays (days).
declareVersioning('AUTO_UPGRADE', onboardingRelay);
