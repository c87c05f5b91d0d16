/** Failure `type` names that workflows end with and callers match on (CONTRACTS §7). */
export const FailureType = {
  ValidationFailed: 'ValidationFailed',
  CardProvisioningFailed: 'CardProvisioningFailed',
  CardProvisioningTimedOut: 'CardProvisioningTimedOut',
  CardholderNotApproved: 'CardholderNotApproved',
  InsufficientFunds: 'InsufficientFunds',
  PlanUnavailable: 'PlanUnavailable',
  EsimRefunded: 'EsimRefunded',
  IdempotencyConflict: 'IdempotencyConflict',
  IdempotencyKeyTerminal: 'IdempotencyKeyTerminal',
  OperationFailed: 'OperationFailed',
  InvalidState: 'InvalidState',
  StaleCardBin: 'StaleCardBin',
  RateLimited: 'RateLimited',
  NotFound: 'NotFound',
  DuplicateCardholder: 'DuplicateCardholder',
  /** A call without idempotency key failed in a way that may have taken effect: not repeated, not known. */
  SubmissionOutcomeUnknown: 'SubmissionOutcomeUnknown',
  KycReviewTimedOut: 'KycReviewTimedOut',
  EsimIssuanceTimedOut: 'EsimIssuanceTimedOut',
  PayoutTrackingTimedOut: 'PayoutTrackingTimedOut',
} as const;
export type FailureTypeName = (typeof FailureType)[keyof typeof FailureType];

/**
 * How much the wallet was missing, in cents, when the provider's wording says so ("short by 1234
 * cents"); the spec promises no such figure, so it is undefined otherwise. Pure: workflows use it.
 */
export function shortfallOf(text: unknown): number | undefined {
  const figure = typeof text === 'string' ? /short by (\d+)/i.exec(text)?.[1] : undefined;
  return figure === undefined ? undefined : Number(figure);
}

/** Field name → rule, as the provider's `errors` map and our own validation report it. */
export type FieldErrors = Record<string, string>;
