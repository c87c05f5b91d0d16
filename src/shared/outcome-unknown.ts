/**
 * Which flows end not knowing whether the provider acted, and by which failure types (issue 29):
 * such a flow marks itself ProviderStatus = OUTCOME_UNKNOWN as it fails (workflows/lib/outcome-unknown.ts)
 * until an operator settles it (shared/settlement.ts); the worker's gauge counts them by kind. Pure,
 * so workflow code and the worker's metrics share it.
 */
import type { FailureTypeName, FlowName } from './failures';

/** The failure types that say a flow could not learn whether its call took effect: it needs a settlement. */
export const UNKNOWN_OUTCOME_TYPES = ['OutcomeUnknown', 'SubmissionOutcomeUnknown'] as const satisfies readonly FailureTypeName[];

export function isUnknownOutcomeType(type: unknown): boolean {
  return (UNKNOWN_OUTCOME_TYPES as readonly unknown[]).includes(type);
}

/**
 * The workflow types that can end with one of UNKNOWN_OUTCOME_TYPES (their FLOW_FAILURES say so),
 * each registered through markingUnknownOutcome (workflows/index.ts). Not cardLifecycle: its updates
 * fail OutcomeUnknown, the card workflow goes on. Not settleOutcome: a settlement still processing
 * at the provider is asked again, it records nothing. Not trackPayout: it moves nothing.
 */
export const OUTCOME_UNKNOWN_FLOWS = ['issueCard', 'fundCard', 'withdrawFromCard', 'onboardCardholder', 'purchaseEsim', 'rechargeEsim', 'sendPayout'] as const satisfies readonly FlowName[];
