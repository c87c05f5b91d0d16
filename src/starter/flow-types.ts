/** Inputs and results of the flows of CONTRACTS §7 that the client starts, in one place for its callers. */
import type { EsimOrder, Payout } from '../provider/schemas';

export type {
  DocumentRef,
  KycDocuments,
  OnboardCardholderInput,
  OnboardCardholderResult,
  PurchaseEsimInput,
  RechargeEsimInput,
  TrackPayoutInput,
} from '../shared/types';

export type EsimOrderResult = EsimOrder;
export type PayoutResult = Payout;
