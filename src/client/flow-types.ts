/** Inputs and results of the flows the client starts (docs/contracts.md, section 7), in one place for its callers. */
import type { EsimOrderAnswer as EsimOrder, OperationAnswer, PayoutAnswer as Payout } from '../provider/answers';

export type {
  DocumentRef,
  KycDocuments,
  HostedKycInput,
  ManualKycInput,
  OnboardCardholderInput,
  OnboardCardholderResult,
  OnboardInput,
  OnboardingProgress,
  PurchaseEsimInput,
  RechargeEsimInput,
  SendPayoutInput,
  TrackPayoutInput,
} from '../shared/types';

/** purchaseEsim's and rechargeEsim's result: the eSIM order as the provider answered it (`orderNo`, `status`, `esimNo`, …). */
export type EsimOrderResult = EsimOrder;

/** An eSIM order's activation data, as the client's `esimQrCode` reads it from the flow that placed the order. */
export interface EsimQrCode {
  /** The order the reference named. */
  orderNo: string;
  /** The eSIM's activation code as the provider gave it: a secret, never logged. Null when the provider gave none. */
  qrCode: string | null;
  /** The eSIM's ICCID, as the order holds it. */
  iccid: string | null;
  /** The eSIM's number at the provider (what rechargeEsim and esimUsage take). */
  esimNo: string | null;
}
/** sendPayout's and trackPayout's result: the payout order at its terminal status, as the provider answered it. */
export type PayoutResult = Payout;

/**
 * The provider's record of an idempotency key (GET /operations/{key}), read through a worker:
 * `known: false` when the provider has none. The spec shows the record's `status` (PROCESSING,
 * COMPLETED, FAILED) and `operationId`; whatever else it holds is kept as the provider gave it.
 */
export type OperationRecord = { idempotencyKey: string; known: false } | { idempotencyKey: string; known: true; record: OperationAnswer };

/** A card money movement the card's workflow accepted (validated, queued behind the card's other operations), not yet its outcome. */
export interface SubmittedMovement {
  /** The card's workflow, `card/<cardId>`. */
  workflowId: string;
  /** The update the movement is: the same call with the same key and amount answers it (fundCard, withdrawFromCard). */
  updateId: string;
  /** The key the movement was submitted under. */
  idempotencyKey: string;
}
