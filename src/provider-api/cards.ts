/**
 * Cards: the request rules of POST /cards, funding, withdrawal, PIN and contact, and the shapes
 * the provider answers with. Only the spec's own rules (docs/provider-fidelity.md); the rules
 * that depend on a BIN's conditions are business rules and live in shared/card-rules.ts.
 */
import { anyString, Body, cents, integer, list, optional, pattern, required, text, withExtra, type Rule } from './rules';

export const CARD_STATUSES = ['CREATING', 'FAILED', 'ENABLE', 'DISABLE', 'DELETING', 'DELETED', 'EXPIRED'] as const;
export type CardStatus = (typeof CARD_STATUSES)[number];

/** Letters of any script, combining marks, spaces, apostrophes (straight or typographic) and hyphens: the spec's words, nothing more. */
export const CARD_NAME_PATTERN = /^[\p{L}\p{M}' \u2019-]+$/u;
const CARD_NAME_RULE = 'must be 1-25 letters, spaces, apostrophes or hyphens';
const cardName = pattern(CARD_NAME_PATTERN, CARD_NAME_RULE, { max: 25, rule: CARD_NAME_RULE });

/** POST /cards: "includes +". */
const cardMobilePrefix = pattern(/\+/, "must include '+'");
/** POST /cards: the number without its prefix. */
const cardMobile = text(Number.MAX_SAFE_INTEGER);
const TAGS_RULE = 'must be an array of up to 6 tags';

/** A PIN is four digits, no digit used twice (so 1123 and 1111 are refused). */
export const PIN_RULE = 'must be 4 digits, no digit repeated';
export const pin: Rule = (v) => (typeof v === 'string' && /^\d{4}$/.test(v) && new Set(v).size === 4 ? undefined : PIN_RULE);

/** The cardholder's billing address on POST /cards: required by a US BIN (issuingCountry `US`), optional otherwise; all strings, as the provider's reference gives them. */
export interface BillingAddress {
  /** Street address, first line. */
  line1: string;
  /** Street address, second line (apartment, suite); may be left out. */
  line2?: string;
  /** City or town. */
  city: string;
  /** State, province or region (for a US address, the state). */
  state: string;
  /** Postal or ZIP code, as a string (leading zeros kept). */
  postalCode: string;
  /** Country, as a string: the provider's reference gives no format, and none is checked here. */
  country: string;
}

/** The spec: strings, line2 optional. */
const billingAddress = new Body<BillingAddress>({
  line1: required(anyString()),
  line2: optional(anyString()),
  city: required(anyString()),
  state: required(anyString()),
  postalCode: required(anyString()),
  country: required(anyString()),
});

export interface CreateCardRequest {
  cardBinId: string;
  initialAmount: number;
  firstName?: string;
  lastName?: string;
  mobilePrefix?: string;
  mobile?: string;
  email?: string;
  pin?: string;
  billingAddress?: BillingAddress;
  tags?: string[];
  cardholderId?: string;
}

export const createCardRequest = new Body<CreateCardRequest>(
  {
    cardBinId: required(text(Number.MAX_SAFE_INTEGER)),
    initialAmount: required(cents(100, 4_000_000)),
    firstName: optional(cardName),
    lastName: optional(cardName),
    mobilePrefix: optional(cardMobilePrefix),
    mobile: optional(cardMobile),
    email: optional(anyString()),
    pin: optional(pin),
    billingAddress: optional(billingAddress),
    tags: optional(list(TAGS_RULE, anyString(), { max: 6 })),
    cardholderId: optional(pattern(/^kyc_./, 'must be a kyc_ id')),
  },
  (body) => {
    const errors: Record<string, string> = {};
    if (body.cardholderId !== undefined) return errors;
    for (const field of ['firstName', 'lastName']) if (body[field] === undefined) errors[field] = 'is required unless cardholderId is given';
    return errors;
  },
);

export interface FundCardRequest {
  amount: number;
}
export const fundCardRequest = new Body<FundCardRequest>({ amount: required(cents(100, 4_000_000)) });

export type WithdrawFromCardRequest = FundCardRequest;
export const withdrawFromCardRequest = new Body<WithdrawFromCardRequest>({ amount: required(integer('must be an integer of at least 10', 10)) });

export interface UpdateCardPinRequest {
  pin: string;
}
export const updateCardPinRequest = new Body<UpdateCardPinRequest>({ pin: required(pin) });

/** Shape not shown: the card's contact fields, with the rules POST /cards gives them. */
export interface UpdateCardContactRequest {
  mobilePrefix?: string;
  mobile?: string;
  email?: string;
  /** Shape not shown: fields we do not model, sent as they are. */
  extra?: Record<string, unknown>;
}
/** The names a contact update's `extra` may carry: those our callers use (docs/provider-fidelity.md). */
export const CONTACT_EXTRA_FIELDS = ['locale', 'preferredLanguage'] as const;
export const updateCardContactRequest = new Body<UpdateCardContactRequest>(
  withExtra(
    {
      mobilePrefix: optional(cardMobilePrefix),
      mobile: optional(cardMobile),
      email: optional(anyString()),
    },
    CONTACT_EXTRA_FIELDS,
  ),
);

// freeze, unfreeze and DELETE take no body. Their answers, and PIN's and contact's, are not shown:
// any 2xx is success, and the card's state is read from GET /cards/{cardId}.

export interface CardBin {
  cardBinId: string;
  bin: string;
  brand: string;
  issuingCountry: string;
  currency: string;
  mobile: boolean;
  email: boolean;
  supportPin: boolean;
  requireKycCardholder: boolean;
}

export interface Card {
  cardId: string;
  /** The name embossed on the card: cardholder first and last name. */
  name: string;
  /** Masked PAN: first 6, six asterisks, last 4 (411111******1234). */
  cardNumber: string;
  status: CardStatus;
  availableBalance: number;
  totalConsumption: number;
  cardBinId: string;
  supportPin: boolean;
  brand: string;
  currency: string;
  cardholderName: string;
  cardholderId?: string;
  mobilePrefix?: string;
  mobile?: string;
  email?: string;
  billingAddress?: BillingAddress;
  tags: string[];
  createdAt: number;
  updatedAt: number;
}

/**
 * GET /cards/:cardId/sensitive: the card's full details, as `revealSensitive` answers them once unsealed.
 * The provider's reference does not show the field names; these are the ones we read, and the answer
 * is otherwise kept whole (docs/provider-fidelity.md).
 */
export interface CardSensitive {
  /** The card these details belong to. */
  cardId: string;
  /** Full PAN, digits only. */
  cardNumber: string;
  /** The card verification value (CVV/CVC): digits, as a string so leading zeros survive. */
  cvv: string;
  /** Expiry month, 1 (January) to 12. */
  expiryMonth: number;
  /** Four digits, e.g. 2029. */
  expiryYear: number;
}

/** Funding and withdrawal answer. */
export interface BalanceMoveResult {
  success: boolean;
  message: string;
  /** Present only when X-Idempotency-Key was supplied. */
  operationId?: string;
}
