/**
 * The provider's interface as zod schemas, shared by the sandbox (server side) and our
 * provider client. Where spec/provider-api.md says "not shown", the shape chosen here is
 * the one both sides use; define it here once and nowhere else.
 *
 * Error messages are short rules ("must be an integer between 100 and 4000000"): the
 * sandbox returns them verbatim in the 400 `errors` map, keyed by the field's dotted path.
 * A missing required field reads "is required".
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------

/** Schema-level error option: "is required" when absent, otherwise the rule. */
function rule(text: string) {
  return { error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : text) };
}

/** Integer cents within [min, max]; one rule text for type, integrality and bounds. */
function cents(min: number, max: number) {
  const text = `must be an integer between ${min} and ${max}`;
  return z.number(rule(text)).int(text).min(min, text).max(max, text);
}

function text(max: number, min = 1) {
  const msg = min > 0 ? `must be a string of ${min} to ${max} characters` : `must be a string of at most ${max} characters`;
  return z.string(rule(msg)).min(min, msg).max(max, msg);
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, rule(`must be one of ${values.join(', ')}`));
}

function pattern(re: RegExp, msg: string) {
  return z.string(rule(msg)).regex(re, msg);
}

const epochMs = z.number().int();

/** Cross-field rules run even when single fields failed (zod's `when`), but only on a JSON object. */
function isRecord(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Letters of any script, combining marks, spaces, apostrophes (straight or typographic) and hyphens: the spec's words, nothing more. */
export const CARD_NAME_PATTERN = /^[\p{L}\p{M}' \u2019-]+$/u;
export const IDEMPOTENCY_KEY_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
export const COUNTRY_PATTERN = /^[A-Z]{2}$/;

export const cardNameSchema = pattern(CARD_NAME_PATTERN, 'must be 1-25 letters, spaces, apostrophes or hyphens').max(
  25,
  'must be 1-25 letters, spaces, apostrophes or hyphens',
);
export const idempotencyKeySchema = pattern(IDEMPOTENCY_KEY_PATTERN, 'must be 1-64 characters of [a-zA-Z0-9_-]');
export const countrySchema = pattern(COUNTRY_PATTERN, 'must be an ISO 3166-1 alpha-2 code in upper case');
/*
 * Only the spec's own rules (docs/provider-fidelity.md). Ids keep the prefixes the spec names
 * (kyc_, epln_, esim_); fileTokens have none in the spec, so none is required here.
 */
const anyString = () => z.string(rule('must be a string'));
const cardEmailSchema = anyString();
const kycEmailSchema = text(128);
/** POST /cards: "includes +". */
const cardMobilePrefixSchema = pattern(/\+/, "must include '+'");
/** POST /cards: the number without its prefix. */
const cardMobileSchema = text(Number.MAX_SAFE_INTEGER);
const cardholderIdSchema = pattern(/^kyc_./, 'must be a kyc_ id');
const fileTokenSchema = text(Number.MAX_SAFE_INTEGER);
const planNoSchema = pattern(/^epln_./, 'must be an epln_ plan id');
const esimNoSchema = pattern(/^esim_./, 'must be an esim_ id');

/** A PIN is four digits, no digit used twice (so 1123 and 1111 are refused). */
export const PIN_RULE = 'must be 4 digits, no digit repeated';
export const pinSchema = pattern(/^\d{4}$/, PIN_RULE).refine((pin) => new Set(pin).size === 4, PIN_RULE);

/** yyyy-MM-dd that is a real calendar date; `when` compares it with today (UTC). */
function isoDate(when: 'past' | 'future', now: () => number = Date.now) {
  const msg = when === 'past' ? 'must be a date yyyy-MM-dd in the past' : 'must be a date yyyy-MM-dd not yet passed';
  return pattern(/^\d{4}-\d{2}-\d{2}$/, msg).refine((s) => {
    const t = Date.parse(`${s}T00:00:00Z`);
    if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== s) return false;
    const today = Date.parse(new Date(now()).toISOString().slice(0, 10) + 'T00:00:00Z');
    return when === 'past' ? t < today : t >= today;
  }, msg);
}

// ---------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------

export const CARD_STATUSES = ['CREATING', 'FAILED', 'ENABLE', 'DISABLE', 'DELETING', 'DELETED', 'EXPIRED'] as const;
export const ID_TYPES = ['PASSPORT', 'ID_CARD', 'DRIVER_LICENSE'] as const;
export const GENDERS = ['MALE', 'FEMALE'] as const;
export const UPLOAD_TYPES = ['IDENTITY_PROOF', 'SELFIE_PROOF', 'ADDRESS_PROOF'] as const;
export const UPLOAD_CONTENT_TYPES = ['image/png', 'image/jpeg', 'application/pdf'] as const;
export const OCCUPATIONS = [
  'GOVERNMENT_OFFICERS', 'GOVERNMENT_WORKERS', 'SOE_AND_STATE_ORGAN_EXECUTIVES', 'SOE_AND_STATE_ORGAN_EMPLOYEES',
  'PRIVATE_BUSINESS_OWNERS_AND_EXECUTIVES', 'PRIVATE_BUSINESS_EMPLOYEES', 'NONE_GOVERNMENT_ORGANIZATION_EXECUTIVES',
  'NONE_GOVERNMENT_ORGANIZATION_EMPLOYEES', 'SOLE_TRADERS', 'RETIREES', 'STUDENTS', 'UNEMPLOYED', 'FREELANCER',
] as const;
export const SOURCES_OF_FUND = [
  'SALARY_OR_EMPLOYMENT_INCOME', 'PENSION_OR_RETIREMENT_BENEFITS', 'FINANCIAL_SUPPORT_FROM_IMMEDIATE_FAMILY',
  'BUSINESS_PROFITS', 'INCOME_FROM_SOLE_PROPRIETORSHIP', 'PROCEEDS_FROM_PERSONAL_INVESTMENTS',
  'DIVIDENDS_OR_SHARE_DISTRIBUTIONS', 'LOAN_PROCEEDS', 'INHERITANCE', 'DONATION_OR_GIFT',
] as const;
export const OPERATION_STATUSES = ['PROCESSING', 'COMPLETED', 'FAILED'] as const;
export const OPERATION_TYPES = ['FUNDING', 'WITHDRAWAL', 'ESIM_PURCHASE', 'ESIM_RECHARGE', 'PAYOUT'] as const;
export const KYC_STATUSES = ['PENDING', 'APPROVED', 'REJECTED'] as const;
export const KYC_MODES = ['MANUAL', 'FORM', 'AUTO'] as const;
export const ESIM_ORDER_STATUSES = ['PAID', 'ISSUING', 'ISSUED', 'FAILED', 'REFUNDED'] as const;
export const ESIM_ORDER_TYPES = ['PURCHASE', 'RECHARGE'] as const;
export const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export const PAYOUT_TERMINAL_STATUSES = ['COMPLETED', 'FAILED', 'CANCELLED'] as const;
export const PAYMENT_TYPES = ['BANK_TRANSFER', 'SWIFT', 'LOCAL_TRANSFER'] as const;

/** Screened synchronously by the KYC form; the provider may change it, its 400 is authoritative. */
export const RESTRICTED_JURISDICTIONS: readonly string[] = [
  'AF', 'AL', 'BY', 'BA', 'BV', 'BF', 'BI', 'CF', 'CN', 'CD', 'CG', 'HR', 'CU', 'ER', 'ET', 'GU', 'GW', 'HT', 'IR', 'IQ',
  'JO', 'XK', 'LB', 'LR', 'LY', 'ML', 'ME', 'MM', 'AN', 'NI', 'KP', 'MK', 'MP', 'PS', 'PR', 'RU', 'RS', 'SI', 'SO', 'SS',
  'SD', 'TC', 'UA', 'US', 'VI', 'VE', 'VN', 'YE', 'ZW',
];

export const cardStatusSchema = z.enum(CARD_STATUSES);
export const operationStatusSchema = z.enum(OPERATION_STATUSES);
export const operationTypeSchema = z.enum(OPERATION_TYPES);
export const kycStatusSchema = z.enum(KYC_STATUSES);
export const kycModeSchema = z.enum(KYC_MODES);
export const esimOrderStatusSchema = z.enum(ESIM_ORDER_STATUSES);
export const payoutStatusSchema = z.enum(PAYOUT_STATUSES);
export type CardStatus = z.infer<typeof cardStatusSchema>;
export type OperationStatus = z.infer<typeof operationStatusSchema>;
export type OperationType = z.infer<typeof operationTypeSchema>;
export type KycStatus = z.infer<typeof kycStatusSchema>;
export type KycMode = z.infer<typeof kycModeSchema>;
export type EsimOrderStatus = z.infer<typeof esimOrderStatusSchema>;
export type PayoutStatus = z.infer<typeof payoutStatusSchema>;
export type UploadType = (typeof UPLOAD_TYPES)[number];
export type UploadContentType = (typeof UPLOAD_CONTENT_TYPES)[number];

// ---------------------------------------------------------------------------------------
// Envelope and errors
// ---------------------------------------------------------------------------------------

export const API_BASE_PATH = '/open-api/v1';

/** Field path (dotted, e.g. billingAddress.country, attachments.2, X-Idempotency-Key) → rule. */
export const fieldErrorsSchema = z.record(z.string(), z.string());
export type FieldErrors = z.infer<typeof fieldErrorsSchema>;

/** Error codes: the first word of a failure `message`. */
export const API_ERROR_CODES = {
  VALIDATION_FAILED: 400,
  IP_NOT_WHITELISTED: 403,
  INVALID_SIGNATURE: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NONCE_REUSED: 409,
  IDEMPOTENCY_CONFLICT: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  IDEMPOTENCY_KEY_TERMINAL: 409,
  DUPLICATE_CARDHOLDER: 409,
  UPLOAD_URL_USED: 409,
  UPLOAD_URL_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INSUFFICIENT_FUNDS: 422,
  PLAN_UNAVAILABLE: 422,
  CARDHOLDER_NOT_APPROVED: 422,
  CARD_LIMIT_REACHED: 422,
  INVALID_STATE: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
} as const;
export type ApiErrorCode = keyof typeof API_ERROR_CODES;

// ---------------------------------------------------------------------------------------
// Endpoints
// ---------------------------------------------------------------------------------------

export type RateClass = 'general' | 'sensitive' | 'balance';
export type IdempotencyPolicy = 'none' | 'optional' | 'required';

export interface EndpointDef {
  key: string;
  method: 'GET' | 'POST' | 'DELETE';
  /** Relative to API_BASE_PATH, path parameters as `:name`. */
  path: string;
  rateClass: RateClass;
  idempotency: IdempotencyPolicy;
}

function ep(key: string, method: EndpointDef['method'], path: string, rateClass: RateClass = 'general', idempotency: IdempotencyPolicy = 'none'): EndpointDef {
  return { key, method, path, rateClass, idempotency };
}

/** Every endpoint; each key has its own rate-limit counter (path parameters normalised). */
export const ENDPOINTS = {
  listCardBins: ep('listCardBins', 'GET', '/card-bins'),
  createCard: ep('createCard', 'POST', '/cards', 'general', 'optional'),
  getCard: ep('getCard', 'GET', '/cards/:cardId'),
  getCardSensitive: ep('getCardSensitive', 'GET', '/cards/:cardId/sensitive', 'sensitive'),
  fundCard: ep('fundCard', 'POST', '/cards/:cardId/funding', 'balance', 'optional'),
  withdrawFromCard: ep('withdrawFromCard', 'POST', '/cards/:cardId/withdrawal', 'balance', 'optional'),
  freezeCard: ep('freezeCard', 'POST', '/cards/:cardId/freeze'),
  unfreezeCard: ep('unfreezeCard', 'POST', '/cards/:cardId/unfreeze'),
  updateCardPin: ep('updateCardPin', 'POST', '/cards/:cardId/pin'),
  updateCardContact: ep('updateCardContact', 'POST', '/cards/:cardId/contact'),
  deleteCard: ep('deleteCard', 'DELETE', '/cards/:cardId'),
  getWalletBalance: ep('getWalletBalance', 'GET', '/wallet/balance'),
  getOperation: ep('getOperation', 'GET', '/operations/:idempotencyKey'),
  createPresignedUpload: ep('createPresignedUpload', 'POST', '/kyc/presignedUploads'),
  submitKycForm: ep('submitKycForm', 'POST', '/kyc/cardholders/form'),
  submitKycManual: ep('submitKycManual', 'POST', '/kyc/cardholders/manual'),
  startHostedKyc: ep('startHostedKyc', 'POST', '/kyc/cardholders/auto'),
  getKycCardholder: ep('getKycCardholder', 'GET', '/kyc/cardholders/:id'),
  createPayout: ep('createPayout', 'POST', '/payouts', 'general', 'required'),
  getPayout: ep('getPayout', 'GET', '/payouts/:merOrderNo'),
  listEsimPlans: ep('listEsimPlans', 'GET', '/esim/plans'),
  purchaseEsim: ep('purchaseEsim', 'POST', '/esim/purchase', 'general', 'optional'),
  rechargeEsim: ep('rechargeEsim', 'POST', '/esim/recharge', 'general', 'optional'),
  getEsimOrder: ep('getEsimOrder', 'GET', '/esim/orders/:orderNo'),
  getEsimUsage: ep('getEsimUsage', 'GET', '/esim/esims/:esimNo/usage'),
} as const satisfies Record<string, EndpointDef>;
export type EndpointKey = keyof typeof ENDPOINTS;

/** Fills a path template: endpointPath(ENDPOINTS.getCard, { cardId }) → /cards/crd_1 (parameters URI-encoded). */
export function endpointPath(endpoint: EndpointDef, params: Record<string, string> = {}): string {
  return endpoint.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

export const IDEMPOTENCY_HEADER = 'X-Idempotency-Key';

// ---------------------------------------------------------------------------------------
// Cards
// ---------------------------------------------------------------------------------------

export const cardBinSchema = z.object({
  cardBinId: z.string(),
  bin: z.string().regex(/^\d{6}$/),
  brand: z.string(),
  issuingCountry: z.string(),
  currency: z.string(),
  mobile: z.boolean(),
  email: z.boolean(),
  supportPin: z.boolean(),
  requireKycCardholder: z.boolean(),
});
export type CardBin = z.infer<typeof cardBinSchema>;
export const listCardBinsResponseSchema = z.array(cardBinSchema);

/** The spec: strings, line2 optional. */
export const billingAddressSchema = z.object({
  line1: anyString(),
  line2: anyString().optional(),
  city: anyString(),
  state: anyString(),
  postalCode: anyString(),
  country: anyString(),
});
export type BillingAddress = z.infer<typeof billingAddressSchema>;

export const createCardRequestSchema = z
  .object({
    cardBinId: text(Number.MAX_SAFE_INTEGER),
    initialAmount: cents(100, 4_000_000),
    firstName: cardNameSchema.optional(),
    lastName: cardNameSchema.optional(),
    mobilePrefix: cardMobilePrefixSchema.optional(),
    mobile: cardMobileSchema.optional(),
    email: cardEmailSchema.optional(),
    pin: pinSchema.optional(),
    billingAddress: billingAddressSchema.optional(),
    tags: z.array(anyString(), rule('must be an array of up to 6 tags')).max(6, 'must be an array of up to 6 tags').optional(),
    cardholderId: cardholderIdSchema.optional(),
  })
  .superRefine(
    (body, ctx) => {
      // Runs even when other fields failed (`when` below), so data may be of any shape.
      const b = (body ?? {}) as Record<string, unknown>;
      if (b.cardholderId !== undefined) return;
      for (const field of ['firstName', 'lastName'] as const) {
        if (b[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'is required unless cardholderId is given' });
      }
    },
    { when: (payload) => isRecord(payload.value) },
  );
export type CreateCardRequest = z.infer<typeof createCardRequestSchema>;

/** The BIN's conditions as far as the provider stated them; an absent one is left to the provider. */
export type BinConditions = Partial<Pick<CardBin, 'mobile' | 'email' | 'supportPin' | 'issuingCountry' | 'requireKycCardholder'>>;

/**
 * The rules that depend on the BIN (mobile, email, PIN, US billing address, KYC cardholder).
 * Shared so the client can refuse early what the provider would refuse; returns {} when met.
 */
export function cardBinRequirementErrors(bin: BinConditions, body: Partial<CreateCardRequest>): FieldErrors {
  const errors: FieldErrors = {};
  if (bin.mobile) {
    if (body.mobilePrefix === undefined) errors.mobilePrefix = 'is required for this cardBinId';
    if (body.mobile === undefined) errors.mobile = 'is required for this cardBinId';
  }
  if (bin.email && body.email === undefined) errors.email = 'is required for this cardBinId';
  if (bin.supportPin === false && body.pin !== undefined) errors.pin = 'is not supported by this cardBinId';
  if (bin.issuingCountry === 'US' && body.billingAddress === undefined) errors.billingAddress = 'is required for a US cardBinId';
  if (bin.requireKycCardholder && body.cardholderId === undefined) errors.cardholderId = 'is required for this cardBinId';
  return errors;
}

export const cardSchema = z.object({
  cardId: z.string(),
  /** The name embossed on the card: cardholder first and last name. */
  name: z.string(),
  /** Masked PAN: first 6, six asterisks, last 4 (411111******1234). */
  cardNumber: z.string(),
  status: cardStatusSchema,
  availableBalance: z.number().int(),
  totalConsumption: z.number().int(),
  cardBinId: z.string(),
  supportPin: z.boolean(),
  brand: z.string(),
  currency: z.string(),
  cardholderName: z.string(),
  cardholderId: z.string().optional(),
  mobilePrefix: z.string().optional(),
  mobile: z.string().optional(),
  email: z.string().optional(),
  billingAddress: billingAddressSchema.optional(),
  tags: z.array(z.string()),
  createdAt: epochMs,
  updatedAt: epochMs,
});
export type Card = z.infer<typeof cardSchema>;

/** GET /cards/:cardId/sensitive */
export const cardSensitiveSchema = z.object({
  cardId: z.string(),
  /** Full PAN, digits only. */
  cardNumber: z.string().regex(/^\d{16}$/),
  cvv: z.string().regex(/^\d{3}$/),
  expiryMonth: z.number().int().min(1).max(12),
  /** Four digits, e.g. 2029. */
  expiryYear: z.number().int(),
});
export type CardSensitive = z.infer<typeof cardSensitiveSchema>;

export const fundCardRequestSchema = z.object({ amount: cents(100, 4_000_000) });
export type FundCardRequest = z.infer<typeof fundCardRequestSchema>;

const WITHDRAW_RULE = 'must be an integer of at least 10';
export const withdrawFromCardRequestSchema = z.object({
  amount: z.number(rule(WITHDRAW_RULE)).int(WITHDRAW_RULE).min(10, WITHDRAW_RULE).max(Number.MAX_SAFE_INTEGER, WITHDRAW_RULE),
});
export type WithdrawFromCardRequest = z.infer<typeof withdrawFromCardRequestSchema>;

/** Funding and withdrawal answer. */
export const balanceMoveResultSchema = z.object({
  success: z.boolean(),
  message: z.string(),
  /** Present only when X-Idempotency-Key was supplied. */
  operationId: z.string().optional(),
});
export type BalanceMoveResult = z.infer<typeof balanceMoveResultSchema>;

export const updateCardPinRequestSchema = z.object({ pin: pinSchema });
export type UpdateCardPinRequest = z.infer<typeof updateCardPinRequestSchema>;

/** Shape not shown: the card's contact fields, with the rules POST /cards gives them. */
export const updateCardContactRequestSchema = z.object({
  mobilePrefix: cardMobilePrefixSchema.optional(),
  mobile: cardMobileSchema.optional(),
  email: cardEmailSchema.optional(),
});
export type UpdateCardContactRequest = z.infer<typeof updateCardContactRequestSchema>;

// freeze, unfreeze, pin, contact and DELETE take no body (pin/contact excepted) and answer the Card.

// ---------------------------------------------------------------------------------------
// Wallet and operations
// ---------------------------------------------------------------------------------------

export const walletBalanceSchema = z.object({
  availableBalance: z.number().int(),
  currency: z.literal('USD'),
});
export type WalletBalance = z.infer<typeof walletBalanceSchema>;

/** GET /operations/:idempotencyKey — one per idempotency key of funding, withdrawal, eSIM and payout calls. */
export const operationSchema = z.object({
  idempotencyKey: z.string(),
  operationId: z.string(),
  type: operationTypeSchema,
  status: operationStatusSchema,
  cardId: z.string().optional(),
  amount: z.number().int().optional(),
  /** eSIM orderNo or payout merOrderNo. */
  orderNo: z.string().optional(),
  /** The error code that failed it, e.g. INSUFFICIENT_FUNDS. */
  failureReason: z.string().optional(),
  createdAt: epochMs,
  updatedAt: epochMs,
});
export type Operation = z.infer<typeof operationSchema>;

// ---------------------------------------------------------------------------------------
// KYC
// ---------------------------------------------------------------------------------------

export const presignedUploadRequestSchema = z.object({
  fileName: text(128),
  contentType: oneOf(UPLOAD_CONTENT_TYPES),
  type: oneOf(UPLOAD_TYPES),
});
export type PresignedUploadRequest = z.infer<typeof presignedUploadRequestSchema>;

export const presignedUploadSchema = z.object({
  uploadUrl: z.string(),
  fileToken: z.string(),
  expiresIn: z.number().int(),
});
export type PresignedUpload = z.infer<typeof presignedUploadSchema>;


export const KYC_IMAGE_SLOTS = {
  idFrontToken: 'IDENTITY_PROOF',
  idBackToken: 'IDENTITY_PROOF',
  selfieToken: 'SELFIE_PROOF',
  addressProofToken: 'ADDRESS_PROOF',
} as const satisfies Record<string, UploadType>;
export type KycImageSlot = keyof typeof KYC_IMAGE_SLOTS;

const ATTACHMENTS_RULE = 'must be an array of 1 to 6 fileTokens';

export const kycFormRequestSchema = z
  .object({
    firstName: text(128),
    lastName: text(128),
    fullName: text(Number.MAX_SAFE_INTEGER),
    fullNameEn: pattern(/^[A-Za-z .'-]*[A-Za-z][A-Za-z .'-]*$/, 'must be Latin letters (with spaces, dots, apostrophes or hyphens)'),
    mobilePrefix: pattern(/^\d{1,4}$/, 'must be 1-4 digits'),
    mobile: pattern(/^\d{4,20}$/, 'must be 4-20 digits'),
    email: kycEmailSchema,
    gender: oneOf(GENDERS),
    birthDate: isoDate('past'),
    occupation: oneOf(OCCUPATIONS),
    nationality: countrySchema,
    idType: oneOf(ID_TYPES),
    idNumber: text(128),
    idExpiryDate: isoDate('future'),
    country: countrySchema,
    state: text(128),
    city: text(128),
    street: text(256),
    address: text(512),
    addressEn: pattern(/^[\x20-\x7E]+$/, 'must be Latin letters, digits and punctuation').max(512, 'must be at most 512 characters'),
    postalCode: text(32),
    sourceOfFund: oneOf(SOURCES_OF_FUND),
    livingCountry: countrySchema,
    idFrontToken: fileTokenSchema,
    idBackToken: fileTokenSchema.optional(),
    selfieToken: fileTokenSchema.optional(),
    addressProofToken: fileTokenSchema.optional(),
    attachments: z.array(fileTokenSchema, rule(ATTACHMENTS_RULE)).min(1, ATTACHMENTS_RULE).max(6, ATTACHMENTS_RULE),
  })
  .superRefine(
    (body, ctx) => {
      const b = (body ?? {}) as Record<string, unknown>;
      if (b.idType === 'ID_CARD' && b.idBackToken === undefined) {
        ctx.addIssue({ code: 'custom', path: ['idBackToken'], message: 'is required when idType is ID_CARD' });
      }
      // A token may sit in one place only: one image slot, or the attachments.
      const seen = new Map<string, string>();
      for (const slot of Object.keys(KYC_IMAGE_SLOTS)) {
        const token = b[slot];
        if (typeof token !== 'string') continue;
        if (seen.has(token)) ctx.addIssue({ code: 'custom', path: [slot], message: `must not repeat the token of ${seen.get(token)}` });
        else seen.set(token, slot);
      }
      if (Array.isArray(b.attachments)) {
        b.attachments.forEach((token, i) => {
          if (typeof token !== 'string') return;
          if (seen.has(token)) ctx.addIssue({ code: 'custom', path: ['attachments', i], message: `must not repeat the token of ${seen.get(token)}` });
          else seen.set(token, `attachments.${i}`);
        });
      }
    },
    { when: (payload) => isRecord(payload.value) },
  );
export type KycFormRequest = z.infer<typeof kycFormRequestSchema>;

const MANUAL_ATTACHMENTS_RULE = 'must be a non-empty array of fileTokens';

/** Deprecated (removal 10 August 2026). Attachments are PDF reports (the provider checks the upload's type). */
export const kycManualRequestSchema = z.object({
  firstName: text(128),
  lastName: text(128),
  idType: oneOf(ID_TYPES),
  idNumber: text(128),
  attachments: z.array(fileTokenSchema, rule(MANUAL_ATTACHMENTS_RULE)).min(1, MANUAL_ATTACHMENTS_RULE),
});
export type KycManualRequest = z.infer<typeof kycManualRequestSchema>;

/** Hosted KYC: the provider runs the identity flow on its own page (verificationUrl). */
export const kycAutoRequestSchema = z.object({
  firstName: text(128),
  lastName: text(128),
  email: kycEmailSchema,
  /** Where the hosted page sends the user when done. */
  redirectUrl: anyString().optional(),
});
export type KycAutoRequest = z.infer<typeof kycAutoRequestSchema>;

/** Answer of the form and manual submissions (and, with verificationUrl, of the hosted flow). */
export const kycSubmissionSchema = z.object({
  id: z.string(),
  kycStatus: kycStatusSchema,
  mode: kycModeSchema,
  verificationUrl: z.string().optional(),
});
export type KycSubmission = z.infer<typeof kycSubmissionSchema>;

/** GET /kyc/cardholders/:id */
export const kycCardholderSchema = z.object({
  id: z.string(),
  kycStatus: kycStatusSchema,
  mode: kycModeSchema,
  firstName: z.string(),
  lastName: z.string(),
  idType: z.enum(ID_TYPES).optional(),
  /** Last four characters only. */
  idNumberLast4: z.string().optional(),
  nationality: z.string().optional(),
  /** Present when REJECTED. */
  reason: z.string().optional(),
  /** Cards currently backed by this cardholder (FAILED and DELETED ones excluded) and the cap. */
  cardCount: z.number().int(),
  maxCardCount: z.number().int(),
  createdAt: epochMs,
  updatedAt: epochMs,
  reviewedAt: epochMs.optional(),
});
export type KycCardholder = z.infer<typeof kycCardholderSchema>;

// ---------------------------------------------------------------------------------------
// Payouts
// ---------------------------------------------------------------------------------------

/**
 * POST /payouts: shape not shown. Our choice: the Payout order's own fields that describe the
 * request, with the types the spec gives them (docs/provider-fidelity.md); the provider's 400
 * decides everything else.
 */
export const createPayoutRequestSchema = z.object({
  merOrderNo: text(Number.MAX_SAFE_INTEGER),
  paymentType: text(Number.MAX_SAFE_INTEGER),
  arriveCurrency: pattern(/^[A-Z]{3}$/, 'must be a currency code (ISO 4217, upper case)'),
  /** Minor units of arriveCurrency. */
  arriveAmount: z.number(rule('must be an integer')).int('must be an integer'),
  payeeFirstName: text(Number.MAX_SAFE_INTEGER),
  payeeLastName: text(Number.MAX_SAFE_INTEGER),
  payeeAccountNo: text(Number.MAX_SAFE_INTEGER),
  remark: anyString().optional(),
});
export type CreatePayoutRequest = z.infer<typeof createPayoutRequestSchema>;

export const payoutSchema = z.object({
  merOrderNo: z.string(),
  status: payoutStatusSchema,
  paymentType: z.string(),
  arriveCurrency: z.string(),
  arriveAmount: z.number().int(),
  /** arriveCurrency units per USD. */
  quoteRate: z.number(),
  /** USD cents debited from the wallet. */
  settleAmount: z.number().int(),
  payeeFirstName: z.string(),
  payeeLastName: z.string(),
  payeeAccountNo: z.string(),
  remark: z.string(),
  failureReason: z.string().optional(),
  operationId: z.string(),
  createdAt: epochMs,
  /** Set when the payout reaches a terminal status. */
  completedAt: epochMs.nullable(),
  canCancel: z.boolean(),
});
export type Payout = z.infer<typeof payoutSchema>;

// ---------------------------------------------------------------------------------------
// eSIM
// ---------------------------------------------------------------------------------------

export const esimPlanSchema = z.object({
  planNo: z.string(),
  name: z.string(),
  /** ISO 3166-1 alpha-2 codes the plan covers. */
  coverage: z.array(z.string()),
  dataMb: z.number().int(),
  validityDays: z.number().int(),
  /** Project-specific catalog price in US dollars (e.g. 4.5); priceCents is the same, exact. */
  priceUsd: z.number(),
  priceCents: z.number().int(),
  available: z.boolean(),
});
export type EsimPlan = z.infer<typeof esimPlanSchema>;
export const listEsimPlansResponseSchema = z.array(esimPlanSchema);

export const purchaseEsimRequestSchema = z.object({ planNo: planNoSchema });
export type PurchaseEsimRequest = z.infer<typeof purchaseEsimRequestSchema>;

/** Renews the eSIM's current plan; planNo, when sent, must be that plan (no switching). */
export const rechargeEsimRequestSchema = z.object({ esimNo: esimNoSchema, planNo: planNoSchema.optional() });
export type RechargeEsimRequest = z.infer<typeof rechargeEsimRequestSchema>;

export const esimOrderSchema = z.object({
  orderNo: z.string(),
  type: z.enum(ESIM_ORDER_TYPES),
  /** The purchase answer says ISSUED or PAID (ISSUING while issuance runs; REFUNDED if it already failed). */
  status: esimOrderStatusSchema,
  planNo: z.string(),
  /** Charged to the wallet, cents. */
  amount: z.number().int(),
  iccid: z.string().nullable(),
  qrCode: z.string().nullable(),
  esimNo: z.string().nullable(),
  /** Present only when X-Idempotency-Key was supplied. */
  operationId: z.string().optional(),
  failureReason: z.string().optional(),
  createdAt: epochMs,
  updatedAt: epochMs,
});
export type EsimOrder = z.infer<typeof esimOrderSchema>;

export const esimUsageSchema = z.object({
  esimNo: z.string(),
  iccid: z.string(),
  planNo: z.string(),
  status: z.enum(['ACTIVE', 'DEPLETED', 'EXPIRED']),
  dataTotalMb: z.number().int(),
  dataUsedMb: z.number().int(),
  dataRemainingMb: z.number().int(),
  expiresAt: epochMs,
  /** When the figures were last synced; at most once a minute. */
  syncedAt: epochMs,
});
export type EsimUsage = z.infer<typeof esimUsageSchema>;

// ---------------------------------------------------------------------------------------
// Webhooks (CONTRACTS §4)
// ---------------------------------------------------------------------------------------

export const kycStatusEventDataSchema = z.object({
  id: z.string(),
  kycStatus: z.enum(['APPROVED', 'REJECTED']),
  reason: z.string().optional(),
});
export const esimIssuedEventDataSchema = z.object({
  orderNo: z.string(),
  esimNo: z.string(),
  iccid: z.string(),
  qrCode: z.string(),
  status: z.literal('ISSUED'),
});
export const esimRefundedEventDataSchema = z.object({
  orderNo: z.string(),
  /** Reserved at purchase; the eSIM itself was never issued. */
  esimNo: z.string().nullable(),
  status: z.literal('REFUNDED'),
  refundAmount: z.number().int(),
});
export const esimRechargedEventDataSchema = z.object({
  orderNo: z.string(),
  esimNo: z.string(),
  status: z.enum(['ISSUED', 'REFUNDED']),
});
export const esimUsageAlertEventDataSchema = z.object({
  orderNo: z.string(),
  esimNo: z.string(),
  thresholdPercent: z.number().int(),
  dataUsedMb: z.number().int(),
  dataTotalMb: z.number().int(),
});
export const esimExpiringEventDataSchema = z.object({ orderNo: z.string(), esimNo: z.string(), expiresAt: epochMs });
export const esimExpiredEventDataSchema = z.object({
  orderNo: z.string(),
  esimNo: z.string(),
  reason: z.enum(['DEPLETED', 'EXPIRED']),
  dataUsedMb: z.number().int(),
  dataTotalMb: z.number().int(),
});
export const cardTransactionEventDataSchema = z.object({
  transactionId: z.string(),
  cardId: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  merchantName: z.string(),
  status: z.enum(['APPROVED', 'DECLINED']),
  declineReason: z.string().optional(),
  createdAt: epochMs,
});

const eventBase = { eventId: z.string().regex(/^evt_/), createdAt: epochMs };
function event<const T extends string, D extends z.ZodType>(eventType: T, data: D) {
  return z.object({ ...eventBase, eventType: z.literal(eventType), data });
}

export const webhookEventSchema = z.discriminatedUnion('eventType', [
  event('CARD_CREATED', cardSchema),
  event('CARDHOLDER_KYC_STATUS', kycStatusEventDataSchema),
  event('ESIM_ISSUED', esimIssuedEventDataSchema),
  event('ESIM_REFUNDED', esimRefundedEventDataSchema),
  event('ESIM_RECHARGED', esimRechargedEventDataSchema),
  event('ESIM_USAGE_ALERT', esimUsageAlertEventDataSchema),
  event('ESIM_EXPIRING', esimExpiringEventDataSchema),
  event('ESIM_EXPIRED', esimExpiredEventDataSchema),
  event('PAYOUT_PROCESSING', payoutSchema),
  event('PAYOUT_COMPLETED', payoutSchema),
  event('PAYOUT_FAILED', payoutSchema),
  event('PAYOUT_CANCELLED', payoutSchema),
  event('CARD_TRANSACTION', cardTransactionEventDataSchema),
]);
export type WebhookEvent = z.infer<typeof webhookEventSchema>;
export type WebhookEventType = WebhookEvent['eventType'];
export type WebhookEventData<T extends WebhookEventType> = Extract<WebhookEvent, { eventType: T }>['data'];

// ---------------------------------------------------------------------------------------
// Validation-error formatting (shared so client-side and server-side errors read the same)
// ---------------------------------------------------------------------------------------

/** zod issues → { 'billingAddress.country': rule }; the first issue per field wins; root issues go under `body`. */
export function fieldErrorsFromZod(error: z.ZodError): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') continue;
    const field = issue.path.length === 0 ? 'body' : issue.path.map(String).join('.');
    if (!(field in out)) out[field] = issue.path.length === 0 && issue.code === 'invalid_type' ? 'must be a JSON object' : issue.message;
  }
  return out;
}
