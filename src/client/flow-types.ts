/** Inputs and results of the flows of CONTRACTS §7 that the client starts, in one place for its callers. */
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

export type EsimOrderResult = EsimOrder;
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
  idempotencyKey: string;
}
