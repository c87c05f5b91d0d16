/** Payouts: the request we send (shape not shown by the spec) and the Payout order. */
import { anyString, Body, integer, optional, pattern, required, text, withExtra } from './rules';

export const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];
export const PAYMENT_TYPES = ['BANK_TRANSFER', 'SWIFT', 'LOCAL_TRANSFER'] as const;

/**
 * POST /payouts: a payout from the project's wallet to a payee's account. The reference does not show
 * the body; these are the Payout order's own fields, checked for their types only (docs/provider-fidelity.md).
 */
export interface CreatePayoutRequest {
  /** Our order number for the payout (the merchant order number): the provider's handle on it, `GET /payouts/{merOrderNo}`; one payout per number. */
  merOrderNo: string;
  /** How the money travels, e.g. BANK_TRANSFER, SWIFT or LOCAL_TRANSFER (the provider's 400 decides which it takes). */
  paymentType: string;
  /** The currency the payee receives: an ISO 4217 code, upper case (`EUR`). */
  arriveCurrency: string;
  /** Minor units of arriveCurrency. */
  arriveAmount: number;
  /** The payee's first (given) name. */
  payeeFirstName: string;
  /** The payee's last (family) name. */
  payeeLastName: string;
  /** The payee's account number at their bank (or IBAN), as the payment type needs it. */
  payeeAccountNo: string;
  /** A free-text note carried with the payout. */
  remark?: string;
  /** Fields we do not model, sent as they are (the provider's 400 may ask for one). */
  extra?: Record<string, unknown>;
}

/**
 * POST /payouts: shape not shown. Our choice: the Payout order's own fields that describe the
 * request, with the types the spec gives them (docs/provider-fidelity.md); the provider's 400
 * decides everything else.
 */
/** The names a payout's `extra` may carry: those our callers use (docs/provider-fidelity.md). */
export const PAYOUT_EXTRA_FIELDS = ['payeeBankCode', 'purpose'] as const;
export const createPayoutRequest = new Body<CreatePayoutRequest>(withExtra({
  merOrderNo: required(text(Number.MAX_SAFE_INTEGER)),
  paymentType: required(text(Number.MAX_SAFE_INTEGER)),
  arriveCurrency: required(pattern(/^[A-Z]{3}$/, 'must be a currency code (ISO 4217, upper case)')),
  arriveAmount: required(integer('must be an integer')),
  payeeFirstName: required(text(Number.MAX_SAFE_INTEGER)),
  payeeLastName: required(text(Number.MAX_SAFE_INTEGER)),
  payeeAccountNo: required(text(Number.MAX_SAFE_INTEGER)),
  remark: optional(anyString()),
}, PAYOUT_EXTRA_FIELDS));

export interface Payout {
  merOrderNo: string;
  status: PayoutStatus;
  paymentType: string;
  arriveCurrency: string;
  arriveAmount: number;
  /** arriveCurrency units per USD. */
  quoteRate: number;
  /** USD cents debited from the wallet. */
  settleAmount: number;
  payeeFirstName: string;
  payeeLastName: string;
  payeeAccountNo: string;
  remark: string;
  failureReason?: string;
  operationId: string;
  createdAt: number;
  /** Set when the payout reaches a terminal status. */
  completedAt: number | null;
  canCancel: boolean;
}
