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

/** A provider status, kept as far as a status word goes (MAX_STATUS_LENGTH): a longer value must not reach a search attribute whole. */
const providerStatus = z.string().transform((s) => s.slice(0, MAX_STATUS_LENGTH));
/** The BIN's conditions, when the provider states them; an absent condition is not enforced locally. */
export const cardBinAnswerSchema = z.looseObject({
  /** The id to issue from: issueCard's `cardBinId`. */
  cardBinId: z.string(),
  /** The leading digits every card number of this BIN starts with (e.g. `485932`). */
  bin: str(),
  /** The card network, e.g. VISA, MASTERCARD. */
  brand: str(),
  /** Where the cards are issued, e.g. `US`, `SG`; a `US` BIN requires a billingAddress. */
  issuingCountry: str(),
  /** The cards' currency (ISO 4217, e.g. USD); their amounts are integer cents of it. */
  currency: str(),
  /** Issuing requires `mobilePrefix` and `mobile`. */
  mobile: bool(),
  /** Issuing requires `email`. */
  email: bool(),
  /** The cards take a PIN (at issuing or later); `false`: a `pin` is refused. */
  supportPin: bool(),
  /** Issuing requires the `cardholderId` of an APPROVED KYC cardholder. */
  requireKycCardholder: bool(),
});
/**
 * A BIN (card product) the project may issue from, as `GET /card-bins` lists it (`cardBins`), with what
 * issuing from it requires. Only `cardBinId` is sure to be present; a condition the provider leaves out
 * is not checked on our side, and the provider's own answer to POST /cards decides (docs/provider-interface.md).
 */
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
  /** PROCESSING, COMPLETED or FAILED (a FAILED key is spent); another word is kept as it came (its meaning: shared/statuses.ts). */
  status: providerStatus,
  /** The provider's id of the operation. */
  operationId: str(),
  /** The key the operation was made under (`X-Idempotency-Key`). */
  idempotencyKey: str(),
  /** FUNDING, WITHDRAWAL, ESIM_PURCHASE, ESIM_RECHARGE or PAYOUT. */
  type: str(),
  /** The card moved, for funding and withdrawal. */
  cardId: str(),
  /** The amount moved, integer cents. */
  amount: int(),
  /** The eSIM order's orderNo or the payout's merOrderNo. */
  orderNo: str(),
  /** Why it FAILED, in the provider's words (scrubbed and capped before it enters history). */
  failureReason: providerWords(),
});
/**
 * The provider's record of one keyed money operation, `GET /operations/{idempotencyKey}` (the client's
 * `operation`): the reference shows only `status`; every other field is there when the provider gives it.
 */
export type OperationAnswer = z.infer<typeof operationAnswerSchema>;

export const walletBalanceAnswerSchema = z.looseObject({
  /** The money the project may spend on funding, payouts and eSIMs: integer cents of `currency`. */
  availableBalance: int(),
  /** ISO 4217 code, USD for the project's wallet. */
  currency: str(),
});
/** The project's wallet balance, `GET /wallet/balance` (`walletBalance`). The reference does not show its shape: both fields may be absent, and any others are kept. */
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
  /** PENDING, PROCESSING, COMPLETED, FAILED or CANCELLED; another word is kept as it came (its meaning: shared/statuses.ts). */
  status: providerStatus,
  /** The payout's order number, as sent. */
  merOrderNo: str(),
  /** As sent, e.g. BANK_TRANSFER. */
  paymentType: str(),
  /** The currency the payee receives (ISO 4217). */
  arriveCurrency: str(),
  /** What the payee receives, minor units of arriveCurrency. */
  arriveAmount: int(),
  /** The rate applied: arriveCurrency units per USD. */
  quoteRate: opt(z.number()),
  /** USD cents debited from the wallet for it. */
  settleAmount: int(),
  /** As sent. */
  payeeFirstName: str(),
  /** As sent. */
  payeeLastName: str(),
  /** As sent. */
  payeeAccountNo: str(),
  /** As sent. */
  remark: str(),
  /** When the provider created the payout, epoch milliseconds. */
  createdAt: int(),
  /** When it reached a terminal status, epoch milliseconds; null (or absent) until then. */
  completedAt: opt(z.number().int().nullable()),
  /** Whether the provider would still cancel it. */
  canCancel: bool(),
  /** Why it FAILED, in the provider's words (scrubbed and capped). */
  failureReason: providerWords(),
});
/**
 * A payout order as the provider answers it (`POST /payouts`, `GET /payouts/{merOrderNo}`, the `PAYOUT_*`
 * webhooks): what sendPayout and trackPayout answer once it is terminal. Only `status` is sure to be present.
 */
export type PayoutAnswer = z.infer<typeof payoutAnswerSchema>;

// --- eSIM ---------------------------------------------------------------------------------

/**
 * Purchase and recharge answers: the spec shows the purchase's (orderNo, status ISSUED or PAID),
 * not the recharge's. The order number is needed to follow the order; a missing status reads
 * PAID, the state the spec gives an order right after the wallet is charged, so the flow waits
 * for the webhook or its poll.
 */
export const esimOrderAnswerSchema = z.looseObject({
  /** The provider's order number: `GET /esim/orders/{orderNo}`. */
  orderNo: z.string(),
  /** PAID, ISSUING, ISSUED, FAILED or REFUNDED; another word is kept as it came. */
  status: providerStatus.catch('PAID'),
  /** The eSIM's ICCID; null until it is issued. */
  iccid: nullableStr(),
  /** The activation code for the person installing the eSIM: a secret, never logged; null until issued. */
  qrCode: nullableStr(),
  /** The eSIM's id (`esim_…`), what a recharge and a usage read name; null until issued. */
  esimNo: nullableStr(),
  /** The provider's operation id; present when the order was made under a key. */
  operationId: str(),
  /** PURCHASE or RECHARGE. */
  type: str(),
  /** The plan bought (`epln_…`). */
  planNo: str(),
  /** Charged to the wallet, USD cents. */
  amount: int(),
  /** Why it FAILED, in the provider's words (scrubbed and capped). */
  failureReason: providerWords(),
});
/** An eSIM order (a purchase or a recharge) as the provider answers it: what purchaseEsim and rechargeEsim answer once it is settled. Only `orderNo` is sure to be present. */
export type EsimOrderAnswer = z.infer<typeof esimOrderAnswerSchema>;

/**
 * GET /esim/orders/{orderNo}: shape not shown. Only the status decides; the order number is the
 * one we asked for (client.ts fills it in when the answer leaves it out).
 */
export const esimOrderLookupAnswerSchema = esimOrderAnswerSchema.extend({ orderNo: str(), status: providerStatus });

/** Shapes not shown: kept whole for the caller. */
export const esimPlanAnswerSchema = z.looseObject({
  /** The plan's id (`epln_…`): purchaseEsim's `planNo`. */
  planNo: str(),
  /** The project's catalog price in US dollars, e.g. 4.5 (a decimal, not cents). */
  priceUsd: opt(z.number()),
});
/**
 * One plan of the eSIM catalog, `GET /esim/plans` (`esimPlans`). The reference does not show its shape:
 * the provider's fields (name, coverage, data and validity, availability, ...) are kept whole, and these two are read when present.
 */
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
