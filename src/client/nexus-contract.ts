/**
 * The Nexus service `cardIssuing` (docs/nexus.md): what teams in other namespaces call, from their
 * own workflows and in their own language, each team through a Nexus endpoint of its own that targets
 * our workers. The operations are the client package's calls (client/client.ts) under the same names,
 * inputs and results, but for an eSIM order's QR code (a reference crosses instead) and a PIN (none):
 * a call that may move money carries the caller's idempotency key, which, scoped to the caller
 * (`<caller>_<key>`), decides our workflow or card update ID as the client's does, so a repeated or
 * retried Nexus call joins the first and moves money once, and no other caller's call ever joins it.
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

/**
 * issueCard without a PIN: a PIN is set through the client package, which seals it to the workers' key
 * (a Nexus payload is the caller's, in clear). A card on an existing cardholder (`cardholderId`) names
 * the key of the caller's own `onboardCardholder` that made that cardholder (`onboardingKey`): a caller
 * issues cards only on cardholders it onboarded.
 */
export type NexusIssueCardRequest = Omit<IssueCardRequest, 'pin'> & { onboardingKey?: string };

/**
 * Where an eSIM order's QR code (its activation secret) is read: by a service in our namespace, through
 * the client package's `esimQrCode(ref)`. It never crosses the endpoint.
 */
export interface EsimQrCodeRef {
  /** The order whose code it is. */
  orderNo: string;
  /** The purchaseEsim or rechargeEsim flow that placed the order (`purchase-esim/<caller>_<key>`, …). */
  workflowId: string;
}

/** purchaseEsim and rechargeEsim over Nexus: the order without its QR code or any other field the provider adds, and a reference to redeem the code by. */
export type NexusEsimOrderResult = Pick<EsimOrderResult, 'orderNo' | 'status' | 'iccid' | 'esimNo' | 'operationId' | 'type' | 'planNo' | 'amount' | 'failureReason'> & {
  qrCodeRef: EsimQrCodeRef;
};

/**
 * onboardCardholder over Nexus: the hosted flow only. The form and the manual submission name
 * documents in our workers' store, which a caller in another namespace neither fills nor owns.
 */
export type NexusOnboardRequest = HostedKycInput & { idempotencyKey: string };

/** An onboarding, by the key it was started under. */
export interface OnboardingRef {
  /** The caller's key its onboardCardholder was started under. */
  idempotencyKey: string;
}

/** A card read: the card's ID. */
export interface CardRef {
  /** A card the caller issued through its own endpoint. */
  cardId: string;
}

/**
 * The Nexus service `cardIssuing` (docs/nexus.md): each operation is the client's call of the same
 * name and shape, with the caller's key scoped to it; a caller acts only on what it issued or onboarded.
 */
export const cardIssuingService = nexus.service(CARD_ISSUING_NEXUS_SERVICE, {
  issueCard: nexus.operation<NexusIssueCardRequest, CardView>(),
  fundCard: nexus.operation<MoneyMovementRequest, MoneyUpdateResult>(),
  withdrawFromCard: nexus.operation<MoneyMovementRequest, MoneyUpdateResult>(),
  purchaseEsim: nexus.operation<PurchaseEsimRequest, NexusEsimOrderResult>(),
  rechargeEsim: nexus.operation<RechargeEsimRequest, NexusEsimOrderResult>(),
  sendPayout: nexus.operation<SendPayoutRequest, PayoutResult>(),
  onboardCardholder: nexus.operation<NexusOnboardRequest, OnboardCardholderResult>(),
  /** Where the onboarding under a key stands: the hosted flow's page as soon as it is known (the person needs it before the review can end). */
  onboarding: nexus.operation<OnboardingRef, OnboardingProgress>(),
  cardState: nexus.operation<CardRef, CardLifecycleState>(),
  walletBalance: nexus.operation<void, WalletBalanceAnswer>(),
});

/** The type of cardIssuingService, for a caller's `createNexusServiceClient`. */
export type CardIssuingService = typeof cardIssuingService;

/** An operation's name, as a caller's allow-list (NEXUS_CALLERS `operations`) names it. */
export type NexusOperationName = keyof CardIssuingService['operations'] & string;

/** Every operation of the service. */
export const NEXUS_OPERATIONS = Object.keys(cardIssuingService.operations) as NexusOperationName[];
