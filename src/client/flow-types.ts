/** Inputs and results of the flows of CONTRACTS §7 that the client starts, in one place for its callers. */
import type { EsimOrderAnswer as EsimOrder, PayoutAnswer as Payout } from '../provider/answers';

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
