/**
 * The Nexus service `cardIssuing` (docs/nexus.md): what teams in other namespaces call, from their
 * own workflows and in their own language, through a Nexus endpoint that targets our workers. The
 * operations are the client package's calls (client/client.ts) under the same names, inputs and
 * results: a call that may move money carries the caller's idempotency key, which decides our
 * workflow or card update ID exactly as the client's does, so a repeated or retried Nexus call joins
 * the first and moves money once.
 *
 * Workflow-safe (nexus-rpc and types only): a caller's workflow imports this module to call us
 * through `createNexusServiceClient`. Callers in other languages declare the same names (the Go
 * example in examples/nexus-caller-go).
 */
import * as nexus from 'nexus-rpc';
import type { IssueCardRequest, MoneyMovementRequest, MoneyUpdateResult, PurchaseEsimRequest, RechargeEsimRequest, SendPayoutRequest } from './requests';
import type { EsimOrderResult, OnboardCardholderResult, PayoutResult } from './flow-types';
import type { CardLifecycleState, CardView, HostedKycInput, OnboardingProgress } from '../shared/types';
import type { WalletBalanceAnswer } from '../provider/answers';

export type { CardLifecycleState, CardView, EsimOrderResult, MoneyMovementRequest, MoneyUpdateResult, OnboardCardholderResult, OnboardingProgress, PayoutResult, PurchaseEsimRequest, RechargeEsimRequest, SendPayoutRequest, WalletBalanceAnswer };

/** The service's name as callers address it. */
export const CARD_ISSUING_NEXUS_SERVICE = 'cardIssuing';

/** issueCard without a PIN: a PIN is set through the client package, which seals it to the workers' key (a Nexus payload is the caller's, in clear). */
export type NexusIssueCardRequest = Omit<IssueCardRequest, 'pin'>;

/**
 * onboardCardholder over Nexus: the hosted flow only. The form and the manual submission name
 * documents in our workers' store, which a caller in another namespace neither fills nor owns.
 */
export type NexusOnboardRequest = HostedKycInput & { idempotencyKey: string };

/** An onboarding, by the key it was started under. */
export interface OnboardingRef {
  idempotencyKey: string;
}

/** A card read: the card's ID. */
export interface CardRef {
  cardId: string;
}

export const cardIssuingService = nexus.service(CARD_ISSUING_NEXUS_SERVICE, {
  issueCard: nexus.operation<NexusIssueCardRequest, CardView>(),
  fundCard: nexus.operation<MoneyMovementRequest, MoneyUpdateResult>(),
  withdrawFromCard: nexus.operation<MoneyMovementRequest, MoneyUpdateResult>(),
  purchaseEsim: nexus.operation<PurchaseEsimRequest, EsimOrderResult>(),
  rechargeEsim: nexus.operation<RechargeEsimRequest, EsimOrderResult>(),
  sendPayout: nexus.operation<SendPayoutRequest, PayoutResult>(),
  onboardCardholder: nexus.operation<NexusOnboardRequest, OnboardCardholderResult>(),
  /** Where the onboarding under a key stands: the hosted flow's page as soon as it is known (the person needs it before the review can end). */
  onboarding: nexus.operation<OnboardingRef, OnboardingProgress>(),
  cardState: nexus.operation<CardRef, CardLifecycleState>(),
  walletBalance: nexus.operation<void, WalletBalanceAnswer>(),
});

export type CardIssuingService = typeof cardIssuingService;
