/**
 * Inputs and results of the workflows other services start (CONTRACTS §7), and the
 * state the entity workflows expose. Plain data: imported by workflows, clients and the bridge.
 */
import type { BillingAddress } from '../provider-api/cards';
import type { CreatePayoutRequest } from '../provider-api/payouts';
import type { KycFormFields } from '../provider-api/kyc';
import type { EntityKind } from './ids';

export type { BillingAddress };

/** How long flows wait for the outside world; every long wait is configurable (tests shorten them). */
export interface WaitTimings {
  /** How long to wait for a webhook before polling. */
  webhookWaitMs?: number;
  /** First poll interval; doubles up to pollMaxIntervalMs. */
  pollInitialIntervalMs?: number;
  pollMaxIntervalMs?: number;
  /** Give up (and fail) when nothing conclusive is known after this long. */
  deadlineMs?: number;
}

export interface IssueCardInput {
  cardBinId: string;
  initialAmount: number;
  firstName?: string;
  lastName?: string;
  email?: string;
  mobilePrefix?: string;
  mobile?: string;
  /** Sealed to the workers' PIN key by the caller (the typed client takes it in clear and seals it). */
  pin?: SealedPin;
  billingAddress?: BillingAddress;
  tags?: string[];
  cardholderId?: string;
  /** Caller-chosen key for POST /cards; derived from the workflow ID when absent. */
  idempotencyKey?: string;
  timings?: WaitTimings;
}

/** issueCard as its caller writes it: the PIN in clear, before the typed client or the CLI seals it (IssueCardInput carries it sealed). */
export type IssueCardRequestInput = Omit<IssueCardInput, 'pin'> & { pin?: string };

/** A card as our flows report it: the masked PAN only. */
export interface CardView {
  cardId: string;
  name?: string;
  cardNumber: string;
  status: string;
  availableBalance: number;
  totalConsumption?: number;
  cardBinId: string;
  supportPin?: boolean;
  brand?: string;
  cardholderName?: string;
  cardholderId?: string;
  createdAt?: number;
  updatedAt?: number;
}

export type MoneyMovementKind = 'funding' | 'withdrawal';

/** What a card workflow's money update asked: a repeat of its update ID or of its caller's key must ask the same. */
export interface MoneyRequest {
  kind: MoneyMovementKind;
  amount: number;
  idempotencyKey?: string;
}

/**
 * What a card workflow's money update answered: repeated to the same update ID, even in a later run;
 * `request` since issue 20; `at` (epoch ms, when it settled) since the card workflow lists its
 * movements for reconcile-money.
 */
export type UpdateOutcome = ({ result: MoneyMovementResult } | { failure: { type?: string; message: string; details: unknown[] } }) & { request?: MoneyRequest; at?: number };

/** One settled money update of a card workflow, as its cardMovements query lists it. */
export type CardMovement = UpdateOutcome & { updateId: string };

export interface MoneyMovementInput {
  cardId: string;
  amount: number;
  idempotencyKey?: string;
  timings?: WaitTimings;
}

export interface MoneyMovementResult {
  cardId: string;
  amount: number;
  operationId: string;
  status: 'COMPLETED';
  idempotencyKey: string;
}

export interface ContactInput {
  email?: string;
  mobilePrefix?: string;
  mobile?: string;
  /** The spec shows no shape for POST /cards/{cardId}/contact: fields we do not model, sent as they are. */
  extra?: Record<string, unknown>;
}

/** A webhook event as the bridge delivers it to a workflow (CONTRACTS §4). */
export interface ProviderEvent {
  eventId: string;
  eventType: string;
  createdAt: number;
  data: Record<string, unknown>;
}

/** What an entity workflow knows about its entity and tells its subscribers. */
export interface EntityState {
  kind: EntityKind;
  entityId: string;
  status?: string;
  /** The latest event's data (or observed record) for this entity. */
  data?: Record<string, unknown>;
  lastEventId?: string;
  lastEventAt?: number;
  eventCount: number;
  /** Where the current status came from: a webhook, the entity's own poll, or our own operation. */
  source?: 'webhook' | 'poll' | 'operation';
  /** The entity's poll failed for good (e.g. the provider knows no such entity): waiting flows fail with it. */
  watchFailure?: { type: string; message: string; details?: unknown[] };
}

/**
 * A waiting flow's schedule for its entity workflow's fallback poll, in absolute times of the
 * flow's clock: poll from `pollFrom` (when no webhook settled it) until `deadlineAt`, with
 * intervals doubling from pollInitialIntervalMs up to pollMaxIntervalMs.
 */
export interface WatchPlan {
  pollFrom: number;
  deadlineAt: number;
  pollInitialIntervalMs: number;
  pollMaxIntervalMs: number;
  /** The waiting flow created the entity: a 404 is the provider's read-after-write lag, polled past like any failed read. */
  notFoundIsLag?: boolean;
}

/** An eSIM's usage or expiry event, as its entity workflow records it (ESIM_USAGE_ALERT, ESIM_EXPIRING, ESIM_EXPIRED). */
export interface EsimAlert {
  eventId: string;
  eventType: string;
  createdAt: number;
  /** The event's figures (thresholdPercent, dataUsedMb, expiresAt, reason, … as the provider sends them). */
  data: Record<string, unknown>;
}

/** What the `esim/<esimNo>` workflow knows: the latest usage it read (at most once a minute) and the alerts it received. */
export interface EsimWatchState {
  esimNo: string;
  /** GET /esim/esims/{esimNo}/usage as the provider answered it (shape not shown). */
  usage?: Record<string, unknown>;
  /** When the usage was read, epoch ms. */
  usageReadAt?: number;
  alerts: EsimAlert[];
}

export interface CardTransaction {
  eventId: string;
  amount: number;
  currency?: string;
  merchantName?: string;
  status?: string;
  createdAt: number;
}

export interface CardLifecycleState {
  cardId: string;
  card?: CardView;
  status?: string;
  recentTransactions: CardTransaction[];
  operationsApplied: number;
  /** When `card.availableBalance` was read from the provider (epoch ms); absent until the first read. */
  balanceReadAt?: number;
  /** A money movement on the card was answered after that read started: the balance shown may not include it. */
  movedSinceBalanceRead?: boolean;
  /** When the card last moved money through us (epoch ms). */
  lastMovedAt?: number;
  /** How old the balance was when the client answered (its clock against `balanceReadAt`); set by the typed client only. */
  balanceAgeMs?: number;
}

/** How fresh a card's view must be: its balance read at most `maxAgeMs` ago, and after its last movement. */
export interface CardFreshness {
  /** Milliseconds, an integer from 0 (always read) to a day. */
  maxAgeMs: number;
}

/**
 * A PIN sealed by its caller to the workers' PIN public key (HPKE, codec/card-secrets.ts): only a
 * worker's private key under `keyId` opens it. `enc` and `sealed` are base64.
 */
export interface SealedPin {
  keyId: string;
  enc: string;
  sealed: string;
  /** Epoch ms after which no flow accepts the box; bound into the seal with the workflow it is for (shared/card-secrets.ts). */
  exp: number;
}

/** A card read sealed by the worker to the one-time public key its requester sent (HPKE): only that requester opens it. */
export interface SealedReveal {
  enc: string;
  sealed: string;
}

/** What a reveal asks with: the requester's one-time X25519 public key (32 bytes in base64). */
export interface RevealRequest {
  publicKey: string;
}

/**
 * A document in the workers' documents store (KYC_DOCUMENTS_DIR): its bytes never enter workflow
 * history, and a caller names it inside the store, never as a path on a worker.
 */
export interface DocumentRef {
  /** Its name inside the store: segments of [A-Za-z0-9._-] separated by /, e.g. applicant-42/passport.png. */
  name: string;
  /** What the bytes are; the worker checks them against it (magic numbers) before the upload. */
  contentType: 'image/png' | 'image/jpeg' | 'application/pdf';
  /** The name the provider records; defaults to the name's last segment. */
  fileName?: string;
}

export interface KycDocuments {
  idFront: DocumentRef;
  idBack?: DocumentRef;
  selfie?: DocumentRef;
  addressProof?: DocumentRef;
  /** Third-party verification reports, 1 to 6. */
  attachments: DocumentRef[];
}

/** The KYC form's fields (POST /kyc/cardholders/form) with documents in place of fileTokens. */
export interface OnboardCardholderInput extends KycFormFields {
  /** The form submission (the default). */
  mode?: 'form';
  documents: KycDocuments;
  timings?: WaitTimings;
}

/** The deprecated manual submission (POST /kyc/cardholders/manual): identity and PDF reports only. */
export interface ManualKycInput {
  mode: 'manual';
  firstName: string;
  lastName: string;
  idType: string;
  idNumber: string;
  /** PDF reports of a third-party verification provider, at least one. */
  documents: { attachments: DocumentRef[] };
  timings?: WaitTimings;
}

/** The hosted flow (POST /kyc/cardholders/auto, shape not shown: docs/provider-fidelity.md): the person verifies on the provider's page. */
export interface HostedKycInput {
  mode: 'hosted';
  firstName: string;
  lastName: string;
  email: string;
  /** Where the provider's page sends the person when done. */
  redirectUrl?: string;
  /** The spec shows no shape for POST /kyc/cardholders/auto: fields we do not model, sent as they are. */
  extra?: Record<string, unknown>;
  timings?: WaitTimings;
}

export type OnboardInput = OnboardCardholderInput | ManualKycInput | HostedKycInput;

/** A reviewed cardholder: REJECTED is a result (with the provider's reason), not a failure. */
export interface OnboardCardholderResult {
  id: string;
  kycStatus: 'APPROVED' | 'REJECTED';
  reason?: string;
  /** The hosted flow's page, where the person verified. */
  verificationUrl?: string;
  /** E.g. the manual submission's deprecation. */
  warnings?: string[];
}

/** Where an onboarding stands before the review (query `onboarding`): the hosted flow's page is here as soon as it is known. */
export interface OnboardingProgress {
  mode: 'form' | 'manual' | 'hosted';
  cardholderId?: string;
  verificationUrl?: string;
  warnings: string[];
}

export interface PurchaseEsimInput {
  planNo: string;
  /** Caller-chosen key for POST /esim/purchase; derived from the workflow ID when absent. */
  idempotencyKey?: string;
  timings?: WaitTimings;
}

export interface RechargeEsimInput {
  esimNo: string;
  /** The spec shows no shape for POST /esim/recharge: fields we do not model, sent as they are. */
  extra?: Record<string, unknown>;
  /** Caller-chosen key for POST /esim/recharge; derived from the workflow ID when absent. */
  idempotencyKey?: string;
  timings?: WaitTimings;
}

export interface TrackPayoutInput {
  merOrderNo: string;
  timings?: WaitTimings;
}

/** POST /payouts (shape not shown; provider-api/payouts.ts, docs/provider-fidelity.md) plus our options. */
export interface SendPayoutInput extends CreatePayoutRequest {
  /** Caller-chosen key for POST /payouts; derived from the workflow ID when absent. */
  idempotencyKey?: string;
  timings?: WaitTimings;
}
