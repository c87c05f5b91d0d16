/**
 * @card-issuing/client: what other services import to start our flows (issue 30). Built from this
 * entry into packages/client (its README shows a service using it); its API report
 * (packages/client/etc/client.api.md) is compared in CI, so a change here is a reviewed diff.
 */
export { CardIssuingClient } from './client';
export type {
  CardIssuingClientOptions,
  FlowHandle,
  IssueCardRequest,
  Keyed,
  MoneyMovementRequest,
  MoneyUpdateResult,
  OnboardRequest,
  PurchaseEsimRequest,
  RechargeEsimRequest,
  SendPayoutRequest,
} from './client';
export { connectCardIssuingClient, connectOptionsErrors, tlsFromFiles } from './connect';
export type { ConnectOptions } from './connect';
export { optionsFromEnv } from './from-env';
export { CardIssuingError, CLIENT_FAILURES, isCardIssuingError, isFailureOf, toCardIssuingError } from './errors';
export type { CardIssuingErrorInit, ClientFailureType, FailureContext, FlowError } from './errors';
export { DEFAULT_READ_TIMEOUT_MS } from './calls';
export { DEFAULT_CARD_VIEW_MAX_AGE_MS } from './card-view';
export type { CardStateOptions } from './card-view';
// The Nexus service's contract (docs/nexus.md); a caller's workflow imports it from `@card-issuing/client/nexus`, which loads nothing else.
export { CARD_ISSUING_NEXUS_SERVICE, NEXUS_OPERATIONS, cardIssuingService } from './nexus-contract';
export type { CardIssuingService, CardRef, EsimQrCodeRef, NexusEsimOrderResult, NexusIssueCardRequest, NexusOnboardRequest, NexusOperationName, OnboardingRef } from './nexus-contract';
export type { CallOptions } from './calls';
export type { FlowStatus, PendingActivity } from '../temporal/flow-status';
export type * from './flow-types';
export { createDataConverter } from '../codec/payload-codec';
export type { CodecKeys } from '../codec/payload-codec';
export type { PinPublicKey } from '../codec/card-secrets';
// Card actions act only with a capability this service signs (docs/security.md, "Who may act on a card").
export { cardActionPublicKeyOf, newCardActionKeyPair } from '../codec/card-capability';
export type { CardActionKey } from '../codec/card-capability';
export { CARD_ACTIONS } from '../shared/card-capability';
export type { CardAction, CardCapability, WithCapability } from '../shared/card-capability';
// Which failure `type` each flow may end with (docs/provider-fidelity.md, "Failure types").
export { ANY_FLOW_FAILURES, FAILURE_TYPES, FLOW_FAILURES, NEXUS_FAILURE_TYPES, isFailureType } from '../shared/failures';
export type { FailureTypeName, FlowFailureType, FlowName } from '../shared/failures';
export type {
  BillingAddress,
  EsimAlert,
  CardLifecycleState,
  CardTransaction,
  CardView,
  ContactInput,
  EsimWatchState,
  IssueCardInput,
  IssueCardRequestInput,
  MoneyMovementInput,
  MoneyMovementResult,
  RevealRequest,
  SealedPin,
  SealedReveal,
  WaitTimings,
} from '../shared/types';
export type { CardSensitive } from '../provider-api';
export type { EsimOrderAnswer, EsimPlanAnswer as EsimPlan, PayoutAnswer, WalletBalanceAnswer as WalletBalance } from '../provider/answers';
export type { CardBinAnswer as CardBin, OperationAnswer } from '../provider/answers';
export type { CreatePayoutRequest } from '../provider-api/payouts';
export type { KycFormFields } from '../provider-api/kyc';
