/**
 * The provider's answers as our client reads them (CONTRACTS §8): each schema requires only
 * what the spec lists AND our flows need; every other field is optional, a field of an
 * unexpected type is dropped rather than fatal, unknown fields are kept, and statuses are
 * plain strings whose meaning lives in shared/statuses.ts. What the sandbox answers in its
 * default profile (a superset) is described in api/ (one file per area); docs/provider-fidelity.md lists
 * each choice.
 */
import { z } from 'zod';
import { MAX_STATUS_LENGTH } from '../shared/event-status';
import { providerText } from './provider-text';

/** A field the flow can do without: absent, null or of another type, it reads as undefined. */
function opt<T extends z.ZodType>(schema: T) {
  return schema.optional().catch(undefined);
}

const str = () => opt(z.string());
const int = () => opt(z.number().int());
const bool = () => opt(z.boolean());
const nullableStr = () => opt(z.string().nullable());
/** The provider's own words (a failure reason, a message): they enter history and logs, so scrubbed and capped (provider-text.ts). */
const providerWords = () => opt(z.string().transform((s) => providerText(s)));

// --- Cards --------------------------------------------------------------------------------

/** The BIN's conditions, when the provider states them; an absent condition is not enforced locally. */

/** A provider status, kept as far as a status word goes (MAX_STATUS_LENGTH): a longer value must not reach a search attribute whole. */
const providerStatus = z.string().transform((s) => s.slice(0, MAX_STATUS_LENGTH));
export const cardBinAnswerSchema = z.looseObject({
  cardBinId: z.string(),
  bin: str(),
  brand: str(),
  issuingCountry: str(),
  currency: str(),
  mobile: bool(),
  email: bool(),
  supportPin: bool(),
  requireKycCardholder: bool(),
});
export type CardBinAnswer = z.infer<typeof cardBinAnswerSchema>;
export const cardBinListAnswerSchema = z.array(cardBinAnswerSchema);

export const cardAnswerSchema = z.looseObject({
  cardId: z.string(),
  status: providerStatus,
  name: str(),
  cardNumber: str(),
  availableBalance: int(),
  totalConsumption: int(),
  cardBinId: str(),
  supportPin: bool(),
  brand: str(),
  cardholderName: str(),
  cardholderId: str(),
  createdAt: int(),
  updatedAt: int(),
});
export type CardAnswer = z.infer<typeof cardAnswerSchema>;

/**
 * freeze, unfreeze, PIN, contact and DELETE: shapes not shown. Any 2xx is success whatever its
 * body (`data: null`, `{ success: true }`, a Card): the card's state is read from
 * GET /cards/{cardId} or the next webhook, never from this answer.
 */
export const cardActionAnswerSchema = z.unknown().transform(() => undefined);

/** Field names not shown by the spec: kept whole, sealed for the caller before it leaves the activity. */
export const cardSensitiveAnswerSchema = z.looseObject({});
export type CardSensitiveAnswer = z.infer<typeof cardSensitiveAnswerSchema>;

/** Funding and withdrawal. Without `success` the outcome is read from GET /operations/{key}. */
export const balanceMoveAnswerSchema = z.looseObject({ success: bool(), message: providerWords(), operationId: str() });
export type BalanceMoveAnswer = z.infer<typeof balanceMoveAnswerSchema>;

/** GET /operations/{key}: the spec shows `status` only; the rest, when given, is checked against our request. */
export const operationAnswerSchema = z.looseObject({
  status: providerStatus,
  operationId: str(),
  idempotencyKey: str(),
  type: str(),
  cardId: str(),
  amount: int(),
  orderNo: str(),
  failureReason: providerWords(),
});
export type OperationAnswer = z.infer<typeof operationAnswerSchema>;

export const walletBalanceAnswerSchema = z.looseObject({ availableBalance: int(), currency: str() });
export type WalletBalanceAnswer = z.infer<typeof walletBalanceAnswerSchema>;

// --- KYC ----------------------------------------------------------------------------------

export const presignedUploadAnswerSchema = z.looseObject({ uploadUrl: z.string(), fileToken: z.string(), expiresIn: int() });
export type PresignedUploadAnswer = z.infer<typeof presignedUploadAnswerSchema>;

export const kycSubmissionAnswerSchema = z.looseObject({ id: z.string(), kycStatus: str(), mode: str(), verificationUrl: str() });
export type KycSubmissionAnswer = z.infer<typeof kycSubmissionAnswerSchema>;

/**
 * GET /kyc/cardholders/{id}: fields not shown. The review needs a status, read from `kycStatus`
 * (the submission's field name) or `status`; nothing else is required. An answer with neither
 * cannot be decided on: an InvalidResponse that a GET may retry (client.ts).
 */
export const kycCardholderAnswerSchema = z
  .looseObject({ kycStatus: str(), status: str(), id: str(), reason: providerWords() })
  .refine((h) => h.kycStatus !== undefined || h.status !== undefined, { path: ['kycStatus'], message: 'no status' })
  .transform(({ status, ...h }) => ({ ...h, kycStatus: (h.kycStatus ?? status) as string }));
export type KycCardholderAnswer = z.infer<typeof kycCardholderAnswerSchema>;

// --- Payouts ------------------------------------------------------------------------------

export const payoutAnswerSchema = z.looseObject({
  status: providerStatus,
  merOrderNo: str(),
  paymentType: str(),
  arriveCurrency: str(),
  arriveAmount: int(),
  quoteRate: opt(z.number()),
  settleAmount: int(),
  payeeFirstName: str(),
  payeeLastName: str(),
  payeeAccountNo: str(),
  remark: str(),
  createdAt: int(),
  completedAt: opt(z.number().int().nullable()),
  canCancel: bool(),
  failureReason: providerWords(),
});
export type PayoutAnswer = z.infer<typeof payoutAnswerSchema>;

// --- eSIM ---------------------------------------------------------------------------------

/**
 * Purchase and recharge answers: the spec shows the purchase's (orderNo, status ISSUED or PAID),
 * not the recharge's. The order number is needed to follow the order; a missing status reads
 * PAID, the state the spec gives an order right after the wallet is charged, so the flow waits
 * for the webhook or its poll.
 */
export const esimOrderAnswerSchema = z.looseObject({
  orderNo: z.string(),
  status: providerStatus.catch('PAID'),
  iccid: nullableStr(),
  qrCode: nullableStr(),
  esimNo: nullableStr(),
  operationId: str(),
  type: str(),
  planNo: str(),
  amount: int(),
  failureReason: providerWords(),
});
export type EsimOrderAnswer = z.infer<typeof esimOrderAnswerSchema>;

/**
 * GET /esim/orders/{orderNo}: shape not shown. Only the status decides; the order number is the
 * one we asked for (client.ts fills it in when the answer leaves it out).
 */
export const esimOrderLookupAnswerSchema = esimOrderAnswerSchema.extend({ orderNo: str(), status: providerStatus });

/** Shapes not shown: kept whole for the caller. */
export const esimPlanAnswerSchema = z.looseObject({ planNo: str(), priceUsd: opt(z.number()) });
export type EsimPlanAnswer = z.infer<typeof esimPlanAnswerSchema>;
/** The catalog as a list, or as an object holding the list under one field (`plans`, `items`, `list`, …). */
export const esimPlanListAnswerSchema = z.preprocess(listInside, z.array(esimPlanAnswerSchema));

/** An array as it is; an object with exactly one array-valued field, that array; anything else unchanged (and refused). */
function listInside(data: unknown): unknown {
  if (Array.isArray(data) || typeof data !== 'object' || data === null) return data;
  const lists = Object.values(data).filter(Array.isArray);
  return lists.length === 1 ? lists[0] : data;
}
export const esimUsageAnswerSchema = z.looseObject({ esimNo: str() });
export type EsimUsageAnswer = z.infer<typeof esimUsageAnswerSchema>;
