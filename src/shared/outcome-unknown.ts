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

/**
 * The failure types after which a caller is told `mayHaveTakenEffect: false` (issue 51): false is a
 * statement that nothing moved, made only where we know it. Every other type (a timeout, a 5xx, an
 * answer we could not read, a deadline passed, an in-progress 409, a type we do not know) may have
 * taken effect. A flow's own `mayHaveTakenEffect` in its details is its statement and stands.
 */
export const NOTHING_TOOK_EFFECT_TYPES = [
  // Refused before anything was sent: our own checks of the request (the provider's 400 says the same
  // of what it received), a Nexus caller's configuration, a card action's missing capability. Safe:
  // no call was made for the request, so there is nothing at the provider to have moved.
  'ValidationFailed',
  'NotAllowed',
  'Unauthorized',
  // The provider stated a terminal failed status: the operation FAILED, the eSIM order REFUNDED, the
  // card FAILED, the key's earlier attempt failed for good (409), the key is another request's (409,
  // or a record under it that visibly names another request).
  'OperationFailed',
  'EsimRefunded',
  'CardProvisioningFailed',
  'IdempotencyKeyTerminal',
  'IdempotencyConflict',
  // The provider's definitive refusal of the request, its stated failure of it. One that follows an
  // attempt under the same key that may have taken effect never arrives under its own type: it ends
  // OutcomeUnknown (activities/idempotent-post.ts, refusedAfterAnEffect; lib/provider.ts readAfterEffect).
  'InsufficientFunds',
  'PlanUnavailable',
  'CardholderNotApproved',
  'CardLimitReached',
  'DuplicateCardholder',
  'InvalidState',
  'StaleCardBin',
  'NotFound',
  'FileTooLarge',
  'UploadUrlExpired',
  'InvalidSignature',
  'IpNotWhitelisted',
  'NonceReused',
] as const satisfies readonly FailureTypeName[];

/** Whether a failure of `type` says nothing took effect (NOTHING_TOOK_EFFECT_TYPES). */
export function saysNothingTookEffect(type: unknown): boolean {
  return (NOTHING_TOOK_EFFECT_TYPES as readonly unknown[]).includes(type);
}

/**
 * Whether a flow's failure may have taken effect (issue 51), for every reader of one (the typed client,
 * an attempt whose owner failed: temporal/attempts.ts): false only where it is known that
 * nothing did, that is a failure type that says so (the provider stated a terminal failed status, or
 * the request was refused before anything was sent: shared/outcome-unknown.ts,
 * NOTHING_TOOK_EFFECT_TYPES), or the flow's own details saying false; an unknown outcome is always
 * true. Before, every failure that did not say true answered false: a flow ending ServerError or
 * Timeout after its POST, or a type the client does not know, told the caller nothing had moved.
 */
export function mayHaveTakenEffectOf(type: string, said: unknown): boolean {
  if (said === true || isUnknownOutcomeType(type)) return true;
  return !(said === false || saysNothingTookEffect(type));
}
