/**
 * Inputs and results of the workflows other services start (docs/contracts.md, section 7), and the
 * state the entity workflows expose. Plain data: imported by workflows, clients and the bridge.
 */
import type { BillingAddress } from '../provider-api/cards';
import type { CreatePayoutRequest } from '../provider-api/payouts';
import type { EntityKind } from './ids';

export type { BillingAddress };
// The KYC onboarding's inputs and results (kyc-types.ts), here too: one import for every flow's types.
export type { DocumentRef, KycDocuments, OnboardCardholderInput, ManualKycInput, HostedKycInput, OnboardInput, OnboardCardholderResult, OnboardingProgress } from './kyc-types';

/** How long flows wait for the outside world; every long wait is configurable (tests shorten them). */
export interface WaitTimings {
  /** How long to wait for a webhook before polling. */
  webhookWaitMs?: number;
  /** First poll interval; doubles up to pollMaxIntervalMs. */
  pollInitialIntervalMs?: number;
  /** The longest interval polling backs off to. */
  pollMaxIntervalMs?: number;
  /** Give up (and fail) when nothing conclusive is known after this long. */
  deadlineMs?: number;
}

/** issueCard's input: the provider's POST /cards request (its rules checked before any call) and our options. */
export interface IssueCardInput {
  /** The BIN to issue from (`bins`, GET /card-bins). */
  cardBinId: string;
  /** Cents moved from the wallet onto the card at issuance: 100 to 4,000,000. */
  initialAmount: number;
  /** Up to 25 letters, spaces, apostrophes or hyphens; required unless `cardholderId` is given. */
  firstName?: string;
  /** As `firstName`. */
  lastName?: string;
  /** Required when the BIN has `email: true`. */
  email?: string;
  /** With its `+`; required with `mobile` when the BIN has `mobile: true`. */
  mobilePrefix?: string;
  /** Without its prefix; required when the BIN has `mobile: true`. */
  mobile?: string;
  /** Sealed to the workers' PIN key by the caller (the typed client takes it in clear and seals it). */
  pin?: SealedPin;
  /** Required when the BIN is issued in the US. */
  billingAddress?: BillingAddress;
  /** Up to 6 tags. */
  tags?: string[];
  /** An APPROVED KYC cardholder (`kyc_…`); required when the BIN has `requireKycCardholder`. */
  cardholderId?: string;
  /** Caller-chosen key for POST /cards; derived from the workflow ID when absent. */
  idempotencyKey?: string;
  /** the flow's waits (webhook, polling, deadline); the defaults suit production, tests shorten them. */
  timings?: WaitTimings;
}

/** issueCard as its caller writes it: the PIN in clear, before the typed client or the CLI seals it (IssueCardInput carries it sealed). */
export type IssueCardRequestInput = Omit<IssueCardInput, 'pin'> & { pin?: string };

/** A card as our flows report it: the masked PAN only. */
export interface CardView {
  /** The provider's card ID (`crd_…`). */
  cardId: string;
  /** The card's name. */
  name?: string;
  /** The masked number (first 6 and last 4 digits); the full one only through revealSensitive. */
  cardNumber: string;
  /** The provider's status: CREATING, FAILED, ENABLE, DISABLE (frozen), DELETING, DELETED, EXPIRED, or one we do not know yet. */
  status: string;
  /** Spendable balance, cents, as the provider last answered it (see CardLifecycleState.balanceReadAt). */
  availableBalance: number;
  /** Cumulative spend, cents. */
  totalConsumption?: number;
  /** The BIN it was issued from. */
  cardBinId: string;
  /** Whether a PIN may be set (setPin). */
  supportPin?: boolean;
  /** E.g. VISA, MASTERCARD. */
  brand?: string;
  /** The holder's name as the provider keeps it (non-Latin letters preserved). */
  cardholderName?: string;
  /** The KYC cardholder it is bound to, if any. */
  cardholderId?: string;
  /** Epoch milliseconds. */
  createdAt?: number;
  /** Epoch milliseconds. */
  updatedAt?: number;
}

/** Which way a card money movement goes: wallet to card (funding) or card to wallet (withdrawal). */
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

/** fundCard's and withdrawFromCard's input. */
export interface MoneyMovementInput {
  /** The card to move money on. */
  cardId: string;
  /** Cents: funding 100 to 4,000,000; withdrawal at least 10 and at most the balance. */
  amount: number;
  /** The caller's key, 1 to 64 of [a-zA-Z0-9_-]: a repeat under it joins the first movement (the typed client requires it). */
  idempotencyKey?: string;
  /** the flow's waits (webhook, polling, deadline); the defaults suit production, tests shorten them. */
  timings?: WaitTimings;
}

/** A completed card money movement. */
export interface MoneyMovementResult {
  /** The card the money moved on. */
  cardId: string;
  /** Cents moved. */
  amount: number;
  /** The provider's operation (`oaop_…`); empty when the answer came from an open item settled moved. */
  operationId: string;
  /** Always COMPLETED: anything else is a failure. */
  status: 'COMPLETED';
  /** The key the movement was made under. */
  idempotencyKey: string;
}

/** A card's contact update: only the fields given change. */
export interface ContactInput {
  /** The card's new email. */
  email?: string;
  /** With its `+`, together with `mobile`. */
  mobilePrefix?: string;
  /** Without its prefix. */
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
  /** The webhook's event ID (applied once). */
  eventId: string;
  /** `ESIM_USAGE_ALERT`, `ESIM_EXPIRING` or `ESIM_EXPIRED`. */
  eventType: string;
  /** Epoch milliseconds, as the provider sent it (or when received). */
  createdAt: number;
  /** The event's figures (thresholdPercent, dataUsedMb, expiresAt, reason, … as the provider sends them). */
  data: Record<string, unknown>;
}

/** What the `esim/<esimNo>` workflow knows: the latest usage it read (at most once a minute) and the alerts it received. */
export interface EsimWatchState {
  /** The eSIM (`esim_…`). */
  esimNo: string;
  /** GET /esim/esims/{esimNo}/usage as the provider answered it (shape not shown). */
  usage?: Record<string, unknown>;
  /** When the usage was read, epoch ms. */
  usageReadAt?: number;
  /** The usage and expiry events received, oldest first. */
  alerts: EsimAlert[];
}

/** A spend on the card, as its `CARD_TRANSACTION` webhook reported it. */
export interface CardTransaction {
  /** The `CARD_TRANSACTION` webhook's event ID. */
  eventId: string;
  /** Cents. */
  amount: number;
  /** ISO 4217, when the provider says. */
  currency?: string;
  /** Where the card was used, when the provider says. */
  merchantName?: string;
  /** The transaction's status as the provider words it. */
  status?: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

/** The card workflow's view (query `cardState`): the card, its recent transactions, and how fresh its balance is. */
export interface CardLifecycleState {
  /** The card this workflow (`card/<cardId>`) holds. */
  cardId: string;
  /** The card as last read or told by the provider; absent until the first read. */
  card?: CardView;
  /** The card's status (as `card.status`). */
  status?: string;
  /** The latest transactions its webhooks reported, newest last. */
  recentTransactions: CardTransaction[];
  /** How many operations (updates) the workflow has applied. */
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
  /** The id of the workers' PIN key it is sealed to. */
  keyId: string;
  /** The HPKE encapsulated key, base64. */
  enc: string;
  /** The sealed PIN, base64. */
  sealed: string;
  /** Epoch ms after which no flow accepts the box; bound into the seal with the workflow it is for (shared/card-secrets.ts). */
  exp: number;
}

/** A card read sealed by the worker to the one-time public key its requester sent (HPKE): only that requester opens it. */
export interface SealedReveal {
  /** The HPKE encapsulated key, base64. */
  enc: string;
  /** The card's number, CVV and expiry, sealed to the request's one-time key, base64. */
  sealed: string;
}

/** What a reveal asks with: the requester's one-time X25519 public key (32 bytes in base64). */
export interface RevealRequest {
  /** The caller's one-time X25519 public key (base64) the answer is sealed to. */
  publicKey: string;
}

/** purchaseEsim's input. */
export interface PurchaseEsimInput {
  /** The plan (`epln_…`, from `esimPlans`). */
  planNo: string;
  /** Caller-chosen key for POST /esim/purchase; derived from the workflow ID when absent. */
  idempotencyKey?: string;
  /** the flow's waits (webhook, polling, deadline); the defaults suit production, tests shorten them. */
  timings?: WaitTimings;
}

/** rechargeEsim's input. */
export interface RechargeEsimInput {
  /** The eSIM whose current plan is renewed (`esim_…`). */
  esimNo: string;
  /** The spec shows no shape for POST /esim/recharge: fields we do not model, sent as they are. */
  extra?: Record<string, unknown>;
  /** Caller-chosen key for POST /esim/recharge; derived from the workflow ID when absent. */
  idempotencyKey?: string;
  /** the flow's waits (webhook, polling, deadline); the defaults suit production, tests shorten them. */
  timings?: WaitTimings;
}

/** trackPayout's input. */
export interface TrackPayoutInput {
  /** The payout order number. */
  merOrderNo: string;
  /** the flow's waits (webhook, polling, deadline); the defaults suit production, tests shorten them. */
  timings?: WaitTimings;
}

/** POST /payouts (shape not shown; provider-api/payouts.ts, docs/provider-fidelity.md) plus our options. */
export interface SendPayoutInput extends CreatePayoutRequest {
  /** Caller-chosen key for POST /payouts; derived from the workflow ID when absent. */
  idempotencyKey?: string;
  /** the flow's waits (webhook, polling, deadline); the defaults suit production, tests shorten them. */
  timings?: WaitTimings;
}
