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
 * Release 3's long-lived types (docs/versioning.md, "Release 3"): pinned to the build each run runs
 * on, and moved to a new build at a continue-as-new (workflows/lib/entity-loop.ts), so a run never
 * changes code mid-history. Until no run of release 2 is left they still take its markers (a run of
 * release 2 auto-upgrades onto this build and is pinned here from then on), so they are not among
 * PINNED_FLOWS, which take every change unmarked. A promotion asks their runs on other builds to
 * look at the new target (temporal/roll-over.ts).
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
] as const satisfies readonly string[];
