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
