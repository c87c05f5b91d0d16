/**
 * The short flows, pinned to the build that started them (docs/versioning.md, "Each workflow type's
 * behaviour"): each declares PINNED beside it (workflows/lib/versioning.ts), and the release gate
 * (temporal/release-gate.ts) asks about exactly these. test/unit/versioning-behaviour.test.ts keeps
 * the two the same.
 */
import type { FlowName } from './failures';

export const PINNED_FLOWS = [
  'fundCard',
  'withdrawFromCard',
  'issueCard',
  'purchaseEsim',
  'rechargeEsim',
  'walletBalance',
  'esimPlans',
  'cardBins',
  'operationRecord',
  'settleOutcome',
] as const satisfies readonly FlowName[];

/**
 * The long-lived types (docs/versioning.md, "Releases 3 and 4"): pinned to the build each run runs
 * on, and moved to a new build at a continue-as-new (workflows/lib/roll-over.ts), so a run never
 * changes code mid-history and no change needs a marker. A promotion asks their runs on other
 * builds to look at the new target (temporal/roll-over.ts). Release 3 pinned all but the last
 * three; those auto-upgraded there, so a build of release 4 may run only once none of their runs
 * of release 3 can reach it (temporal/marker-gate.ts).
 */
export const ROLLING_FLOWS = [
  'cardLifecycle',
  'providerEntity',
  'openItem',
  // Moves at its one continue-as-new, when it becomes its open item (on the current build).
  'moneyAttempt',
  // The Nexus relay: its workers are unversioned today (fleet/nexus-bundle.ts), so it is never pinned yet.
  'onboardingRelay',
  // The reconciliation runs, under their schedule names and their former ones (workflows/index.ts).
  'reconcile-money',
  'reconcileMoney',
  'reconcile-cards',
  'reconcileCards',
  'refresh-bins',
  'refreshBins',
  'sweep-stuck',
  'sweepStuck',
  // Days-long waits (a payout's terminal status, a KYC review): they move while they wait (lib/await-outcome.ts).
  'sendPayout',
  'trackPayout',
  'onboardCardholder',
] as const satisfies readonly string[];
