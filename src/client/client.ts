/**
 * The typed client other services import (issue 30): starts the flows of CONTRACTS §7 and operates
 * on a card through its workflow's updates. Every call that may move money takes the caller's
 * idempotency key in its type, and the key decides the workflow or update ID: a retry of the same
 * call, from this process or another, joins the first; another request under the key is refused
 * IdempotencyConflict before anything starts. Every call takes `{ timeout, signal }`; every failure
 * is a CardIssuingError (errors.ts). One Temporal connection per client, with our data converter
 * (payloads and failure messages encrypted), as samples-typescript's `client.ts`.
 */
import type { Client, Connection } from '@temporalio/client';
import { FailureType, type FlowName } from '../shared/failures';
import type { PinPublicKey } from '../codec/card-secrets';
import { CardActionSigner } from '../codec/card-capability';
import type { CardAction, WithCapability } from '../shared/card-capability';
import type { CardSensitive } from '../provider-api';
import { entityWorkflowId } from '../shared/ids';
import { signalEntity } from '../temporal/entity-signals';
import type { EsimPlanAnswer as EsimPlan, WalletBalanceAnswer as WalletBalance } from '../provider/answers';
import {
  deleteCardUpdate,
  esimWatchQuery,
  freezeCardUpdate,
  onboardingQuery,
  refreshEsimUsageUpdate,
  subscribeSignal,
  fundCardUpdate,
  revealSensitiveUpdate,
  setPinUpdate,
  unfreezeCardUpdate,
  updateContactUpdate,
  withdrawFromCardUpdate,
} from '../shared/messages';
import type { CardLifecycleState, CardView, ContactInput, EsimWatchState, OnboardInput, OnboardingProgress } from '../shared/types';
import { issueCardSealed, revealUnderOneTimeKey, sealedPinOf } from './card-secrets';
import { MANUAL_KYC_DEPRECATION } from '../shared/kyc-rules';
import type { EsimOrderResult, OnboardCardholderResult, PayoutResult, TrackPayoutInput } from './flow-types';
import { describeFlow, type FlowStatus } from '../temporal/flow-status';
import { CardIssuingError } from './errors';
import { CardUpdates } from './card-updates';
import { freshCardState, type CardStateOptions } from './card-view';
import { FlowStarts } from './flow-starts';
import { Reads } from './reads';
import { emitDeprecation, type CardIssuingClientOptions } from './options';
import { DEFAULT_READ_TIMEOUT_MS, type CallOptions } from './calls';
import { ONBOARD_CARDHOLDER_ID, assertKey, assertQrCodeRef, keyedWorkflowId, onboardingWorkflowId, readableId, type FlowHandle, type IssueCardRequest, type MoneyMovementRequest, type MoneyUpdateResult, type OnboardRequest, type PurchaseEsimRequest, type RechargeEsimRequest, type SendPayoutRequest } from './requests';
import type { CardBinAnswer as CardBin, OperationAnswer } from '../provider/answers';
import type { EsimQrCode, OperationRecord, SubmittedMovement } from './flow-types';
import type { EsimQrCodeRef } from './nexus-contract';

export type { FlowHandle, IssueCardRequest, Keyed, MoneyMovementRequest, MoneyUpdateResult, OnboardRequest, PurchaseEsimRequest, RechargeEsimRequest, SendPayoutRequest } from './requests';

export type { CardIssuingClientOptions } from './options';

/**
 * The typed client other services use to start our flows and act on cards, over one Temporal
 * connection (connectCardIssuingClient). Every call that may move money takes the caller's
 * idempotency key: a repeat under it joins the first call and moves money once. Every failure is a
 * CardIssuingError whose `type` names the reason and whose `mayHaveTakenEffect` says whether money
 * may have moved. It holds no provider secret: reads go through a worker.
 */
export class CardIssuingClient {
  readonly #temporal: Client;
  readonly #taskQueue: string;
  readonly #pinKey?: PinPublicKey;
  readonly #ownConnection?: Connection;
  readonly #onDeprecation: (message: string) => void;
  readonly #updates: CardUpdates;
  readonly #cardActions?: CardActionSigner;
  readonly #starts: FlowStarts;
  readonly #reads: Reads;

  constructor(opts: CardIssuingClientOptions, ownConnection?: Connection) {
    this.#cardActions = opts.cardActionKey ? new CardActionSigner(opts.cardActionKey) : undefined;
    this.#starts = new FlowStarts(opts.client, opts.taskQueue);
    this.#reads = new Reads(opts.client, opts.taskQueue);
    this.#temporal = opts.client;
    this.#updates = new CardUpdates(opts.client, opts.taskQueue);
    this.#onDeprecation = opts.onDeprecation ?? emitDeprecation;
    this.#taskQueue = opts.taskQueue;
    this.#pinKey = opts.pinKey;
    this.#ownConnection = ownConnection;
  }

  /** The Temporal client and main task queue behind this client (schedules, reconciliation, settlements). */
  get temporal(): { client: Client; taskQueue: string } {
    return { client: this.#temporal, taskQueue: this.#taskQueue };
  }

  // --- Flows that move money: keys required (docs/contracts.md, section 7) ----------------

  /**
   * `issue-card/<key>`: a retry joins or finds the first card, never makes a second. A `pin` is sealed
   * to the workers' key here (pinKey); the request's digest says only that it had one, so a retry
   * under the key with another PIN joins the first card and its PIN.
   */
  async startIssueCard(request: IssueCardRequest, opts?: CallOptions): Promise<FlowHandle<CardView, 'issueCard'>> {
    assertKey(request.idempotencyKey, 'issueCard');
    const { input, digestInput } = await issueCardSealed(request, this.#pinKey, keyedWorkflowId(['issue-card'], request.idempotencyKey!));
    return this.#startKeyed('issueCard', ['issue-card'], input, opts, request.idempotencyKey, digestInput);
  }

  /**
   * Issues a card and waits until it is `ENABLE` (startIssueCard, then its result): the card with its
   * masked number. Its `initialAmount` moves from the wallet to the card.
   *
   * - Key: `idempotencyKey` (required); the workflow ID `issue-card/<key>` and the provider's key derive from it.
   * - Repeated under the key (a retry, another process): joins or finds the first card; never a second.
   * - The key with another request: `IdempotencyConflict`, before any call.
   * - Failures: `ValidationFailed` (before any call), `CardProvisioningFailed`, `CardholderNotApproved`,
   *   …, `OutcomeUnknown` (money may have moved: a repeat answers the same until its open item is
   *   settled, then `SettledMoved` or `OperationFailed`); `ClientTimeout` when `opts.timeout` ends the
   *   wait, not the flow (repeat under the key to join it).
   */
  issueCard(input: IssueCardRequest, opts?: CallOptions): Promise<CardView> {
    return this.#run(this.startIssueCard(input, opts), opts);
  }

  /** `purchase-esim/<key>`. */
  startPurchaseEsim(input: PurchaseEsimRequest, opts?: CallOptions): Promise<FlowHandle<EsimOrderResult, 'purchaseEsim'>> {
    return this.#startKeyed('purchaseEsim', ['purchase-esim'], input, opts);
  }

  /**
   * Buys an eSIM of `planNo` (the wallet is charged) and waits until the order is `ISSUED`: the order,
   * with its QR code. Keyed as issueCard: a repeat under the key joins the first order and charges once;
   * a refunded order fails `EsimRefunded`, an unavailable plan `PlanUnavailable`.
   */
  purchaseEsim(input: PurchaseEsimRequest, opts?: CallOptions): Promise<EsimOrderResult> {
    return this.#run(this.startPurchaseEsim(input, opts), opts);
  }

  /** `recharge-esim/<esimNo>/<key>`. */
  startRechargeEsim(input: RechargeEsimRequest, opts?: CallOptions): Promise<FlowHandle<EsimOrderResult, 'rechargeEsim'>> {
    return this.#startKeyed('rechargeEsim', ['recharge-esim', input.esimNo], input, opts);
  }

  /**
   * Renews the current plan of eSIM `esimNo` (the wallet is charged) and waits until its order is
   * terminal. Keyed per eSIM: a repeat under the key joins the first recharge and charges once.
   */
  rechargeEsim(input: RechargeEsimRequest, opts?: CallOptions): Promise<EsimOrderResult> {
    return this.#run(this.startRechargeEsim(input, opts), opts);
  }

  /** `send-payout/<key>`: one payout per key (and the activity finds an earlier payout by merOrderNo before any POST). */
  startSendPayout(input: SendPayoutRequest, opts?: CallOptions): Promise<FlowHandle<PayoutResult, 'sendPayout'>> {
    return this.#startKeyed('sendPayout', ['send-payout'], input, opts);
  }

  /**
   * Creates a payout and follows it to its terminal status (startSendPayout, then its result). A
   * FAILED payout is a result with its reason (and `shortfall` when the provider says how much the
   * wallet missed), not a failure.
   *
   * - Key: `idempotencyKey` (required; the provider requires one too); the workflow ID is `send-payout/<key>`.
   * - Repeated under the key: joins the first; one payout per key, whatever the retries or restarts
   *   (an earlier payout is found by `merOrderNo` before any POST).
   * - The key with another request: `IdempotencyConflict`, before any call.
   * - `OutcomeUnknown`: the payout may exist; a repeat answers the same until its open item is settled.
   * - A Nexus caller's payout above its limit waits for an operator's approval (`payout-approve`).
   */
  sendPayout(input: SendPayoutRequest, opts?: CallOptions): Promise<PayoutResult> {
    return this.#run(this.startSendPayout(input, opts), opts);
  }

  /**
   * `onboard-cardholder/<key>`: the form (default), the deprecated manual submission (told to
   * `onDeprecation`, and carried in the result's `warnings`) or the hosted flow (its page:
   * `onboarding(workflowId)`). The key is ours only (the provider takes none): a restart never submits twice.
   */
  startOnboardCardholder(request: OnboardRequest, opts?: CallOptions): Promise<FlowHandle<OnboardCardholderResult, 'onboardCardholder'>> {
    const { idempotencyKey, ...input } = request;
    if (input.mode === 'manual') this.#onDeprecation(MANUAL_KYC_DEPRECATION);
    return this.#startKeyed('onboardCardholder', [ONBOARD_CARDHOLDER_ID], input as OnboardInput, opts, idempotencyKey);
  }

  /**
   * Submits a KYC cardholder and waits for the review: `{ id, kycStatus, reason? }`. `REJECTED` is a
   * result, not a failure. Keyed by `idempotencyKey` (ours only): a repeat joins the first and never
   * submits twice. The documents are named in the workers' documents store, never sent as bytes.
   */
  onboardCardholder(request: OnboardRequest, opts?: CallOptions): Promise<OnboardCardholderResult> {
    return this.#run(this.startOnboardCardholder(request, opts), opts);
  }

  /**
   * Card money moves one way: as an update of the card's workflow, serialised with its other
   * operations (freeze, delete). The update ID comes from the key and the amount, so a retry under
   * the key joins the first (the card answers its first outcome, moving nothing twice) and the same
   * key with another amount reaches the card, which refuses it IdempotencyConflict before any call.
   */
  fundCard(input: MoneyMovementRequest, opts?: CallOptions): Promise<MoneyUpdateResult> {
    return this.#updates.money(fundCardUpdate, 'fund', input, opts);
  }

  /**
   * Moves `amount` cents from the card back to the wallet, as an update of the card's workflow, and
   * answers once it completed: `{ cardId, amount, operationId, status: 'COMPLETED', idempotencyKey }`.
   *
   * - Key: `idempotencyKey` (required); the update ID is the key and the amount, the provider's key derives from it.
   * - Repeated under the key with the same amount: joins the first and answers its outcome; nothing moves twice.
   * - The key with another amount: `IdempotencyConflict`, before any call.
   * - Failures: `ValidationFailed` (before any call: an amount outside the provider's bounds, …),
   *   `InsufficientFunds`, `InvalidState` (the card cannot take it now), `NotFound`, `OperationFailed` (the provider said FAILED),
   *   `OutcomeUnknown` (money may have moved: a repeat answers the same until the open item is
   *   settled, then the movement or `OperationFailed`); `ClientTimeout` or `Aborted` end the wait, not
   *   the movement (repeat under the key to join it).
   */
  withdrawFromCard(input: MoneyMovementRequest, opts?: CallOptions): Promise<MoneyUpdateResult> {
    return this.#updates.money(withdrawFromCardUpdate, 'withdraw', input, opts);
  }

  /**
   * fundCard, answered once the card's workflow accepted the movement (validated; it runs behind
   * the card's other operations), not once it completed. fundCard with the same key and amount
   * then joins it and answers its outcome. A refusal (IdempotencyConflict, ValidationFailed) fails
   * this call as it would fundCard.
   */
  submitFundCard(input: MoneyMovementRequest, opts?: CallOptions): Promise<SubmittedMovement> {
    return this.#updates.submitMoney(fundCardUpdate, 'fund', input, opts);
  }

  /** withdrawFromCard, answered once the card's workflow accepted it (as submitFundCard). */
  submitWithdrawFromCard(input: MoneyMovementRequest, opts?: CallOptions): Promise<SubmittedMovement> {
    return this.#updates.submitMoney(withdrawFromCardUpdate, 'withdraw', input, opts);
  }

  // --- Flows that move nothing ---------------------------------------------------------

  /** One tracker per payout: tracking the same payout again joins the running tracker. */
  startTrackPayout(input: TrackPayoutInput, opts?: CallOptions): Promise<FlowHandle<PayoutResult, 'trackPayout'>> {
    return this.#starts.start('trackPayout', `track-payout/${input.merOrderNo}`, input, opts);
  }

  /** Follows the payout `merOrderNo` to its terminal status and answers it (moves nothing). */
  trackPayout(input: TrackPayoutInput, opts?: CallOptions): Promise<PayoutResult> {
    return this.#run(this.startTrackPayout(input, opts), opts);
  }

  /** Where an onboarding stands: its cardholder id and the hosted flow's page, as soon as they are known. */
  onboarding(workflowId: string, opts?: CallOptions): Promise<OnboardingProgress> {
    return this.#reads.read(opts, { workflowId }, () => this.#temporal.workflow.getHandle(workflowId).query(onboardingQuery));
  }

  /** `onboarding` of the onboardCardholder started under `idempotencyKey` (its workflow ID by the same rule). */
  async onboardingByKey(idempotencyKey: string, opts?: CallOptions): Promise<OnboardingProgress> {
    assertKey(idempotencyKey, 'onboarding lookup');
    return this.onboarding(onboardingWorkflowId(idempotencyKey), opts);
  }

  // --- Reads (through workflows: callers hold no provider credentials) ------------------

  /** The wallet's balance; with no worker polling, fails ClientTimeout after `timeout` (default 30 s) naming the queue. */
  walletBalance(opts?: CallOptions): Promise<WalletBalance> {
    return this.#reads.flow<WalletBalance>('walletBalance', 'wallet-balance', opts);
  }

  /** The eSIM catalogue with the project's prices, read through a worker (the client holds no provider secret). */
  esimPlans(opts?: CallOptions): Promise<EsimPlan[]> {
    return this.#reads.flow<EsimPlan[]>('esimPlans', 'esim-plans', opts);
  }

  /** The BINs the project may issue from, as a worker's 24 h cache holds them; `refresh`: the provider asked now. */
  cardBins(query: { refresh?: boolean } = {}, opts?: CallOptions): Promise<CardBin[]> {
    return this.#reads.flowWith<CardBin[]>('cardBins', readableId('card-bins'), [{ refresh: query.refresh === true }], opts);
  }

  /** The provider's record of an idempotency key (GET /operations/{key}), read by a worker; `known: false` when it has none. */
  async operation(idempotencyKey: string, opts?: CallOptions): Promise<OperationRecord> {
    assertKey(idempotencyKey, 'operation lookup');
    const record = await this.#reads.flowWith<OperationAnswer | null>('operationRecord', readableId('operation', idempotencyKey, undefined), [{ idempotencyKey }], opts);
    return record === null ? { idempotencyKey, known: false } : { idempotencyKey, known: true, record };
  }

  /** The eSIM's usage, read again only when the last read is a minute old, and its alerts. */
  esimUsage(esimNo: string, opts?: CallOptions): Promise<EsimWatchState> {
    return this.#reads.read(opts, { workflowId: entityWorkflowId('esim', esimNo) }, () => this.#updates.entity('esim', esimNo, refreshEsimUsageUpdate, []));
  }

  /**
   * The QR code of an eSIM order (its activation secret) from the purchaseEsim or rechargeEsim flow that
   * placed it: what a Nexus caller's answer references (`qrCodeRef`) instead of carrying it, redeemed
   * here, in our namespace. A flow still running is waited for within the call's timeout (30 s unless
   * told). Never log the result.
   */
  async esimQrCode(ref: EsimQrCodeRef, opts?: CallOptions): Promise<EsimQrCode> {
    assertQrCodeRef(ref);
    const { orderNo, workflowId } = ref;
    const order = await this.flow<EsimOrderResult>(workflowId).result({ timeout: DEFAULT_READ_TIMEOUT_MS, ...opts });
    if (order.orderNo !== orderNo) {
      throw new CardIssuingError({ type: FailureType.ValidationFailed, message: `${workflowId} placed another order than ${orderNo}: the reference does not hold`, workflowId, details: [{ errors: { orderNo: 'must be the order the flow placed' } }] });
    }
    return { orderNo: order.orderNo, qrCode: order.qrCode ?? null, iccid: order.iccid ?? null, esimNo: order.esimNo ?? null };
  }

  /** What the eSIM's workflow recorded, without asking the provider. */
  esimWatch(esimNo: string, opts?: CallOptions): Promise<EsimWatchState> {
    const workflowId = entityWorkflowId('esim', esimNo);
    return this.#reads.read(opts, { workflowId }, () => this.#temporal.workflow.getHandle(workflowId).query(esimWatchQuery));
  }

  /** Sends the eSIM's state (alerts included) to a workflow of the caller's on every change, as `entityState` signals. */
  async subscribeToEsim(esimNo: string, subscriberWorkflowId: string, opts?: CallOptions): Promise<void> {
    await this.#reads.read(opts, {}, () => signalEntity(this.#temporal, this.#taskQueue, { kind: 'esim', entityId: esimNo }, subscribeSignal, [{ workflowId: subscriberWorkflowId }]));
  }

  // --- One card, through its workflow's updates ----------------------------------------

  // Each card action carries a capability this client signs for that card, action and request (cardActionKey).

  /** Pauses the card's spending (`DISABLE`), through its workflow; signed with cardActionKey. Answers the card. */
  freeze(cardId: string, opts?: CallOptions): Promise<CardView> {
    return this.#reads.read(opts, { workflowId: entityWorkflowId('card', cardId) }, () => this.#updates.card(cardId, freezeCardUpdate, [this.#allow(cardId, 'freeze', {})]));
  }

  /** Resumes the card's spending (`ENABLE`), through its workflow; signed with cardActionKey. Answers the card. */
  unfreeze(cardId: string, opts?: CallOptions): Promise<CardView> {
    return this.#reads.read(opts, { workflowId: entityWorkflowId('card', cardId) }, () => this.#updates.card(cardId, unfreezeCardUpdate, [this.#allow(cardId, 'unfreeze', {})]));
  }

  /** Permanently closes the card; its balance returns to the wallet. */
  delete(cardId: string, opts?: CallOptions): Promise<CardView> {
    return this.#reads.read(opts, { workflowId: entityWorkflowId('card', cardId), mayHaveTakenEffect: true }, () => this.#updates.card(cardId, deleteCardUpdate, [this.#allow(cardId, 'delete', {})]));
  }

  /** The PIN is sealed here to the workers' key (pinKey), bound to this card: history holds only what a worker's private key opens, and only for this card. */
  async setPin(cardId: string, pin: string, opts?: CallOptions): Promise<CardView> {
    const sealed = await sealedPinOf(pin, this.#pinKey, 'setPin', entityWorkflowId('card', cardId));
    return this.#reads.read(opts, { workflowId: entityWorkflowId('card', cardId) }, () => this.#updates.card(cardId, setPinUpdate, [this.#allow(cardId, 'pin', { pin: sealed })]));
  }

  /** Updates the card's email or mobile (and `extra` fields the endpoint allows), through its workflow; signed with cardActionKey. */
  updateContact(cardId: string, contact: ContactInput, opts?: CallOptions): Promise<CardView> {
    return this.#reads.read(opts, { workflowId: entityWorkflowId('card', cardId) }, () => this.#updates.card(cardId, updateContactUpdate, [this.#allow(cardId, 'contact', contact)]));
  }

  /**
   * The card workflow's view: masked card (no contact data), status, recent transactions, and a
   * balance read at most `opts.maxAgeMs` ago (default 5 s) and after the card's last movement: the
   * card is read from the provider first when the view held is older (card-view.ts).
   * `balanceReadAt`, `balanceAgeMs` and `movedSinceBalanceRead` say how old it is.
   */
  cardState(cardId: string, opts?: CardStateOptions): Promise<CardLifecycleState> {
    const workflowId = entityWorkflowId('card', cardId);
    return this.#reads.read(opts, { workflowId }, () => freshCardState(this.#temporal, workflowId, opts));
  }

  /**
   * Full PAN, CVV and expiry. The request carries a one-time public key made for this call; the
   * worker seals the card to it, and only this call's private key (never stored, never sent) opens
   * what the update answers, so no history, codec endpoint or other client can.
   * Never log the result.
   */
  revealSensitive(cardId: string, opts?: CallOptions): Promise<CardSensitive> {
    return this.#reads.read(opts, { workflowId: entityWorkflowId('card', cardId) }, () =>
      revealUnderOneTimeKey(cardId, (request) => this.#allow(cardId, 'reveal', request), (request) => this.#updates.card(cardId, revealSensitiveUpdate, [request])),
    );
  }

  /** `args` with a capability for `action` on `cardId`; without a signing key, ValidationFailed before anything is sent. */
  #allow<A extends object>(cardId: string, action: CardAction, args: A): WithCapability<A> {
    if (!this.#cardActions) {
      const errors = { cardActionKey: `is required to ${action === 'pin' ? 'set a PIN' : action === 'contact' ? 'change contact data' : `${action} a card`}: this service's card action signing key (CARD_ACTION_SIGNING_KEY), whose public key the workers trust (CARD_ACTION_TRUSTED_KEYS)` };
      throw new CardIssuingError({ type: 'ValidationFailed', message: `card ${action} needs cardActionKey: ${errors.cardActionKey}`, details: [{ errors }] });
    }
    return this.#cardActions.authorise(cardId, action, args);
  }

  // --- Any flow ------------------------------------------------------------------------

  /** Re-attaches to a flow by its workflow ID (started by this process or any other). */
  flow<R = unknown, F extends FlowName = FlowName>(workflowId: string, runId?: string): FlowHandle<R, F> {
    const handle = this.#temporal.workflow.getHandle<() => Promise<R>>(workflowId, runId);
    return this.#starts.handle<R, F>(workflowId, runId ?? '', handle);
  }

  /** Where a flow stands: status, type, search attributes, pending activities, and its failure once failed. */
  status(workflowId: string, opts?: CallOptions): Promise<FlowStatus> {
    return this.#reads.read(opts, { workflowId }, () => describeFlow(this.#temporal.workflow.getHandle(workflowId)));
  }

  /** Closes the connection when this client opened it. */
  async close(): Promise<void> {
    await this.#ownConnection?.close();
  }

  // --- How calls are made ----------------------------------------------------------------

  /** Waits for a started flow's result within the call's options. */
  async #run<R, F extends FlowName>(started: Promise<FlowHandle<R, F>>, opts?: CallOptions): Promise<R> {
    return (await started).result(opts);
  }

  /** A money flow under its caller's key: the key is checked, and decides the workflow ID. */
  async #startKeyed<I, R, F extends FlowName>(workflowType: F, idParts: string[], input: I & { idempotencyKey?: string }, opts?: CallOptions, key = input.idempotencyKey, digestInput: unknown = input): Promise<FlowHandle<R, F>> {
    assertKey(key, workflowType);
    return this.#starts.start<I, R, F>(workflowType, keyedWorkflowId(idParts, key), input, opts, key, digestInput);
  }

}
