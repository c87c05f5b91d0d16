/**
 * Every failure type in one place: the provider's error codes and what each maps to, the types a
 * provider call fails with, the types our workflows end with, and, per workflow, the reasons a
 * caller should expect. Retry policies, workflows, clients and the sandbox import it; it imports
 * nothing, so workflow bundles pay almost nothing for it (docs/performance.md P3/P4).
 */

/**
 * What a provider call can fail with: an activity turns the provider client's ProviderError into
 * an ApplicationFailure of this type (retry traits per type: ERROR_TRAITS in provider/errors.ts).
 */
export const PROVIDER_ERROR_TYPES = [
  'RateLimited',
  'InvalidSignature',
  'IpNotWhitelisted',
  'NonceReused',
  'IdempotencyConflict',
  'IdempotencyInProgress',
  'IdempotencyKeyTerminal',
  'InsufficientFunds',
  'PlanUnavailable',
  'CardholderNotApproved',
  'CardLimitReached',
  'DuplicateCardholder',
  'InvalidState',
  'ValidationFailed',
  'StaleCardBin',
  'NotFound',
  'ServerError',
  'Timeout',
  'NetworkError',
  'InvalidResponse',
  'FileTooLarge',
  'UploadUrlExpired',
] as const;
export type ProviderErrorType = (typeof PROVIDER_ERROR_TYPES)[number];

interface CodeMeaning {
  /** The HTTP status the code comes with. */
  status: number;
  /** The failure type we read it as. */
  type: ProviderErrorType;
  /** The same refusal in words for people: the sandbox's `minimal` profile sends it, and provider/errors.ts must read it. */
  plain: string;
}

/**
 * The provider's error codes (the first word of a failure `message`): the spec lists statuses and
 * conditions but no codes, so these are the words the sandbox's contract profile sends; a provider
 * that words its messages otherwise is read by provider/classification.ts's CLASSIFICATION, then by status.
 */
export const PROVIDER_ERROR_CODES = {
  VALIDATION_FAILED: { status: 400, type: 'ValidationFailed', plain: 'Invalid request parameters' },
  IP_NOT_WHITELISTED: { status: 403, type: 'IpNotWhitelisted', plain: 'Request IP address is not whitelisted' },
  INVALID_SIGNATURE: { status: 403, type: 'InvalidSignature', plain: 'Invalid signature' },
  NOT_FOUND: { status: 404, type: 'NotFound', plain: 'Resource not found' },
  // A method the endpoint does not take: our bug, not the provider's state; refused, so without effect.
  METHOD_NOT_ALLOWED: { status: 405, type: 'InvalidResponse', plain: 'Method not allowed' },
  NONCE_REUSED: { status: 409, type: 'NonceReused', plain: 'Nonce has already been used' },
  IDEMPOTENCY_CONFLICT: { status: 409, type: 'IdempotencyConflict', plain: 'Idempotency key was used with a different request' },
  IDEMPOTENCY_IN_PROGRESS: { status: 409, type: 'IdempotencyInProgress', plain: 'A request with this idempotency key is still being processed' },
  IDEMPOTENCY_KEY_TERMINAL: { status: 409, type: 'IdempotencyKeyTerminal', plain: 'The request with this idempotency key already failed; use a new key' },
  DUPLICATE_CARDHOLDER: { status: 409, type: 'DuplicateCardholder', plain: 'Duplicate cardholder: a submission with this ID document is pending or approved' },
  // Already used or expired, the remedy is the same: ask for a new upload URL.
  UPLOAD_URL_USED: { status: 409, type: 'UploadUrlExpired', plain: 'Upload URL already used' },
  UPLOAD_URL_EXPIRED: { status: 410, type: 'UploadUrlExpired', plain: 'Upload URL has expired' },
  PAYLOAD_TOO_LARGE: { status: 413, type: 'FileTooLarge', plain: 'File is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, type: 'ValidationFailed', plain: 'Unsupported content type' },
  INSUFFICIENT_FUNDS: { status: 422, type: 'InsufficientFunds', plain: 'Insufficient wallet balance' },
  PLAN_UNAVAILABLE: { status: 422, type: 'PlanUnavailable', plain: 'This plan is currently unavailable' },
  CARDHOLDER_NOT_APPROVED: { status: 422, type: 'CardholderNotApproved', plain: 'Cardholder is not approved' },
  CARD_LIMIT_REACHED: { status: 422, type: 'CardLimitReached', plain: 'Card limit reached for this cardholder' },
  INVALID_STATE: { status: 422, type: 'InvalidState', plain: 'Operation not allowed in the current state' },
  RATE_LIMITED: { status: 429, type: 'RateLimited', plain: 'Too many requests' },
  INTERNAL_ERROR: { status: 500, type: 'ServerError', plain: 'Internal server error' },
} as const satisfies Record<string, CodeMeaning>;
export type ProviderErrorCode = keyof typeof PROVIDER_ERROR_CODES;

/** What a code word means, or undefined for a word that is not one of the provider's codes. */
export function codeMeaning(code: string): CodeMeaning | undefined {
  return Object.hasOwn(PROVIDER_ERROR_CODES, code) ? PROVIDER_ERROR_CODES[code as ProviderErrorCode] : undefined;
}

/** Types only our workflows name: what the flow was asked for did not happen, though no call failed. */
export const FLOW_FAILURE_TYPES = [
  'CardProvisioningFailed',
  'CardProvisioningTimedOut',
  'EsimRefunded',
  /** A money movement the provider recorded as FAILED for a reason other than the balance. */
  'OperationFailed',
  /** A call without idempotency key failed in a way that may have taken effect: not repeated, not known. */
  'SubmissionOutcomeUnknown',
  /**
   * A call that may have moved money could not be settled by its deadline, or may not be posted
   * again (an endpoint the spec does not call idempotent): the details carry the key, the endpoint
   * and what the provider last said, for an operator to reconcile.
   */
  'OutcomeUnknown',
  'KycReviewTimedOut',
  'EsimIssuanceTimedOut',
  'PayoutTrackingTimedOut',
  /**
   * A card action without a valid capability, or a decision on a payout held for approval that an
   * approver's key did not sign (shared/card-capability.ts): refused before any provider call.
   */
  'Unauthorized',
  /**
   * A payout held for an operator's approval (a Nexus caller's above its payoutApprovalAbove) was
   * rejected, or not approved in time: the flow sent nothing to the provider (mayHaveTakenEffect: false).
   */
  'PayoutNotApproved',
] as const;

/**
 * Types only our Nexus handler names (src/nexus, docs/nexus.md, "Who can call"): no flow ends with
 * them, since the handler refuses before anything starts.
 */
export const NEXUS_FAILURE_TYPES = [
  /**
   * The caller's configuration (NEXUS_CALLERS) does not allow what it asked: an operation not in its
   * list, an amount above its limit, a card or cardholder it does not own. Never retried; nothing started.
   */
  'NotAllowed',
] as const;

/** Every `type` an ApplicationFailure of ours may carry: `failWith` takes nothing else. */
export const FAILURE_TYPES = [...PROVIDER_ERROR_TYPES, ...FLOW_FAILURE_TYPES, ...NEXUS_FAILURE_TYPES] as const;
/** One of FAILURE_TYPES: the `type` of an ApplicationFailure of ours. */
export type FailureTypeName = (typeof FAILURE_TYPES)[number];

/** The types by name (`FailureType.ValidationFailed`), for code that reads better than a string literal. */
export const FailureType = Object.freeze(Object.fromEntries(FAILURE_TYPES.map((t) => [t, t]))) as { readonly [T in FailureTypeName]: T };

const KNOWN: ReadonlySet<string> = new Set(FAILURE_TYPES);

/** True for a type declared here (an activity may throw anything; only these are re-thrown under their own type). */
export function isFailureType(type: unknown): type is FailureTypeName {
  return typeof type === 'string' && KNOWN.has(type);
}

/**
 * Failures no flow can do anything about, which any flow may therefore end with once Temporal's
 * retries are spent: our credentials or address refused, or the provider unreachable or garbled.
 * (A 429 never ends a flow: the flow waits for the window's reset.)
 */
export const ANY_FLOW_FAILURES = [
  'InvalidSignature',
  'IpNotWhitelisted',
  'NonceReused',
  'IdempotencyInProgress',
  'ServerError',
  'Timeout',
  'NetworkError',
  'InvalidResponse',
] as const satisfies readonly FailureTypeName[];

/**
 * Per workflow type (CONTRACTS §7, and the card workflow's updates), the reasons it ends with
 * beyond ANY_FLOW_FAILURES. A REJECTED KYC review and a FAILED or cancelled payout are results,
 * not failures.
 */
export const FLOW_FAILURES = {
  issueCard: [
    'ValidationFailed',
    'StaleCardBin',
    'CardholderNotApproved',
    'CardLimitReached',
    'InsufficientFunds',
    'IdempotencyConflict',
    'IdempotencyKeyTerminal',
    'CardProvisioningFailed',
    'CardProvisioningTimedOut',
    'OutcomeUnknown',
  ],
  fundCard: ['ValidationFailed', 'NotFound', 'InvalidState', 'InsufficientFunds', 'OperationFailed', 'IdempotencyConflict', 'IdempotencyKeyTerminal', 'OutcomeUnknown'],
  withdrawFromCard: ['ValidationFailed', 'NotFound', 'InvalidState', 'InsufficientFunds', 'OperationFailed', 'IdempotencyConflict', 'IdempotencyKeyTerminal', 'OutcomeUnknown'],
  /** The updates of `card/<cardId>` (fund, withdraw, freeze, unfreeze, PIN, contact, delete, reveal). */
  cardLifecycle: ['ValidationFailed', 'NotFound', 'InvalidState', 'InsufficientFunds', 'OperationFailed', 'IdempotencyConflict', 'IdempotencyKeyTerminal', 'OutcomeUnknown', 'RateLimited', 'Unauthorized'],
  onboardCardholder: [
    'ValidationFailed',
    'FileTooLarge',
    'UploadUrlExpired',
    'DuplicateCardholder',
    'SubmissionOutcomeUnknown',
    'OutcomeUnknown',
    'NotFound',
    'KycReviewTimedOut',
  ],
  purchaseEsim: ['ValidationFailed', 'PlanUnavailable', 'InsufficientFunds', 'IdempotencyConflict', 'IdempotencyKeyTerminal', 'EsimRefunded', 'EsimIssuanceTimedOut', 'OutcomeUnknown'],
  rechargeEsim: [
    'ValidationFailed',
    'NotFound',
    'InvalidState',
    'PlanUnavailable',
    'InsufficientFunds',
    'IdempotencyConflict',
    'IdempotencyKeyTerminal',
    'EsimRefunded',
    'EsimIssuanceTimedOut',
    'OutcomeUnknown',
  ],
  trackPayout: ['ValidationFailed', 'NotFound', 'PayoutTrackingTimedOut'],
  sendPayout: ['ValidationFailed', 'IdempotencyConflict', 'IdempotencyKeyTerminal', 'PayoutTrackingTimedOut', 'OutcomeUnknown', 'PayoutNotApproved', 'Unauthorized'],
  /** An operator's settlement (starter settle): OutcomeUnknown while the provider still processes it. */
  settleOutcome: ['ValidationFailed', 'NotFound', 'OutcomeUnknown'],
  walletBalance: [],
  esimPlans: [],
  /** The operator's reads through the worker (starter `bins`, `operation KEY`). */
  cardBins: [],
  operationRecord: ['ValidationFailed'],
  /** An open item never fails: it closes with its record; an operator's settlement that cannot be taken fails the update, not the item. */
  openItem: [],
  /** An attempt never fails: it is settled, recorded by its owner, or becomes its open item. */
  moneyAttempt: [],
  /** The reconciliation runs (CONTRACTS §9), under both their names: a difference is a finding in the report, never a failure. */
  'reconcile-money': [],
  'reconcile-cards': [],
  'refresh-bins': [],
  'sweep-stuck': [],
  reconcileMoney: [],
  reconcileCards: [],
  refreshBins: [],
  sweepStuck: [],
} as const satisfies Record<string, readonly FailureTypeName[]>;
/** A workflow type of ours that declares its failures in FLOW_FAILURES (issueCard, fundCard, …). */
export type FlowName = keyof typeof FLOW_FAILURES;

/** The `type` a failure of workflow W carries: `catch (e) { switch ((e as ApplicationFailure).type as FlowFailureType<'fundCard'>) … }`. */
export type FlowFailureType<W extends FlowName> = (typeof FLOW_FAILURES)[W][number] | (typeof ANY_FLOW_FAILURES)[number];

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
