/**
 * The typed client other services import: starts the flows of CONTRACTS §7 with readable
 * workflow IDs, operates on a card through its workflow's updates, and reads a flow's state.
 * One Temporal connection per client, with our data converter (payloads and failure messages
 * encrypted), as samples-typescript's `client.ts`.
 *
 * Failures surface as the workflow's own ApplicationFailure (`type`, `message`,
 * `details[0].errors`): WorkflowFailedError and WorkflowUpdateFailedError are unwrapped. The
 * types each flow may end with: FLOW_FAILURES and FlowFailureType (shared/failures.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowUpdateFailedError,
  type Workflow,
} from '@temporalio/client';
import { withStableUpdateId } from './update-with-start';
import { canonicalJson } from '../shared/canonical-json';
import { FailureType } from '../shared/failures';
import { ApplicationFailure, type UpdateDefinition } from '@temporalio/common';
import type { Config } from '../config';
import { createDataConverter } from '../codec/payload-codec';
import { ValueSealer } from '../codec/sealed-value';
import type { Tracing } from '../observability/tracing';
import type { CardSensitive } from '../provider/api';
import { toCardView } from '../shared/card-rules';
import { entityWorkflowId } from '../shared/ids';
import { entityQueue } from '../shared/task-queues';
import { signalEntity } from '../temporal/entity-signals';
import type { EsimPlanAnswer as EsimPlan, WalletBalanceAnswer as WalletBalance } from '../provider/answers';
import {
  cardStateQuery,
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
import type {
  CardLifecycleState, CardView, ContactInput, EsimWatchState, IssueCardInput, MoneyMovementInput, MoneyMovementResult, OnboardInput, OnboardingProgress,
} from '../shared/types';
import { MANUAL_KYC_DEPRECATION } from '../shared/kyc-rules';
import { clientConnectionOptions } from '../temporal/connection';
import type {
  EsimOrderResult,
  OnboardCardholderResult,
  PayoutResult,
  PurchaseEsimInput,
  RechargeEsimInput,
  SendPayoutInput,
  TrackPayoutInput,
} from './flow-types';
import { describeFlow, type FlowStatus } from './status';

export interface StartOptions {
  /** The whole workflow ID; a repeated start with the same ID joins the flow instead of repeating it. */
  workflowId?: string;
}

/** A started flow: its ID, and its result with failures unwrapped to the workflow's ApplicationFailure. */
export interface FlowHandle<R> {
  workflowId: string;
  runId: string;
  result(): Promise<R>;
}

export type MoneyMovementArgs = Omit<MoneyMovementInput, 'cardId'>;

export interface MoneyUpdateOptions {
  /** The update ID of a call being repeated (from an earlier result or error). */
  updateId?: string;
}

export type MoneyUpdateResult = MoneyMovementResult & { updateId: string };

export interface CardIssuingClientOptions {
  /** A client built with createDataConverter(codec); the caller closes its connection. */
  client: Client;
  taskQueue: string;
  /** The payload codec key: revealSensitive unseals with the key derived from it. */
  codec: Config['codec'];
  /** Where the provider's deprecations are told; default: a Node DeprecationWarning. */
  onDeprecation?: (message: string) => void;
}

const emitDeprecation = (message: string) => process.emitWarning(message, { type: 'DeprecationWarning', code: 'PROVIDER_DEPRECATION' });

export class CardIssuingClient {
  readonly #temporal: Client;
  readonly #taskQueue: string;
  readonly #sealer: ValueSealer;
  readonly #ownConnection?: Connection;
  readonly #onDeprecation: (message: string) => void;

  constructor(opts: CardIssuingClientOptions, ownConnection?: Connection) {
    this.#temporal = opts.client;
    this.#onDeprecation = opts.onDeprecation ?? emitDeprecation;
    this.#taskQueue = opts.taskQueue;
    this.#sealer = new ValueSealer(opts.codec);
    this.#ownConnection = ownConnection;
  }

  /** The Temporal client and main task queue behind this client (schedules and reconciliation, src/temporal/schedules.ts). */
  get temporal(): { client: Client; taskQueue: string } {
    return { client: this.#temporal, taskQueue: this.#taskQueue };
  }

  // --- Flows (CONTRACTS §7) -------------------------------------------------------------

  /** With the caller's idempotency key the workflow ID is `issue-card/<key>`: a retry joins or finds the first card, never makes a second. */
  startIssueCard(input: IssueCardInput, opts?: StartOptions): Promise<FlowHandle<CardView>> {
    return this.#start('issueCard', readableId('issue-card', input.idempotencyKey), input, opts);
  }

  startFundCard(input: MoneyMovementInput, opts?: StartOptions): Promise<FlowHandle<MoneyMovementResult>> {
    return this.#start('fundCard', readableId('fund-card', input.cardId, input.idempotencyKey), input, opts);
  }

  startWithdrawFromCard(input: MoneyMovementInput, opts?: StartOptions): Promise<FlowHandle<MoneyMovementResult>> {
    return this.#start('withdrawFromCard', readableId('withdraw-from-card', input.cardId, input.idempotencyKey), input, opts);
  }

  /**
   * The form (default), the deprecated manual submission (told to `onDeprecation` here, a Node
   * DeprecationWarning by default, and carried in the result's `warnings`) or the hosted flow (its page: `onboarding(workflowId)`).
   */
  startOnboardCardholder(input: OnboardInput, opts?: StartOptions): Promise<FlowHandle<OnboardCardholderResult>> {
    if (input.mode === 'manual') this.#onDeprecation(MANUAL_KYC_DEPRECATION);
    return this.#start('onboardCardholder', readableId('onboard-cardholder'), input, opts);
  }

  /** Where an onboarding stands: its cardholder id and the hosted flow's page, as soon as they are known. */
  onboarding(workflowId: string): Promise<OnboardingProgress> {
    return this.#temporal.workflow.getHandle(workflowId).query(onboardingQuery);
  }

  startPurchaseEsim(input: PurchaseEsimInput, opts?: StartOptions): Promise<FlowHandle<EsimOrderResult>> {
    return this.#start('purchaseEsim', readableId('purchase-esim', input.idempotencyKey), input, opts);
  }

  startRechargeEsim(input: RechargeEsimInput, opts?: StartOptions): Promise<FlowHandle<EsimOrderResult>> {
    return this.#start('rechargeEsim', readableId('recharge-esim', input.esimNo, input.idempotencyKey), input, opts);
  }

  /** One tracker per payout: tracking the same payout again joins the running tracker. */
  startTrackPayout(input: TrackPayoutInput, opts?: StartOptions): Promise<FlowHandle<PayoutResult>> {
    return this.#start('trackPayout', `track-payout/${input.merOrderNo}`, input, opts);
  }

  async issueCard(input: IssueCardInput, opts?: StartOptions): Promise<CardView> {
    return (await this.startIssueCard(input, opts)).result();
  }

  async fundCard(input: MoneyMovementInput, opts?: StartOptions): Promise<MoneyMovementResult> {
    return (await this.startFundCard(input, opts)).result();
  }

  async withdrawFromCard(input: MoneyMovementInput, opts?: StartOptions): Promise<MoneyMovementResult> {
    return (await this.startWithdrawFromCard(input, opts)).result();
  }

  async onboardCardholder(input: OnboardInput, opts?: StartOptions): Promise<OnboardCardholderResult> {
    return (await this.startOnboardCardholder(input, opts)).result();
  }

  async purchaseEsim(input: PurchaseEsimInput, opts?: StartOptions): Promise<EsimOrderResult> {
    return (await this.startPurchaseEsim(input, opts)).result();
  }

  async rechargeEsim(input: RechargeEsimInput, opts?: StartOptions): Promise<EsimOrderResult> {
    return (await this.startRechargeEsim(input, opts)).result();
  }

  async trackPayout(input: TrackPayoutInput, opts?: StartOptions): Promise<PayoutResult> {
    return (await this.startTrackPayout(input, opts)).result();
  }

  /**
   * One payout per merOrderNo: a repeated start with the same order number joins the running
   * flow, or starts one that reuses the first one's idempotency key (derived from the workflow ID).
   */
  startSendPayout(input: SendPayoutInput, opts?: StartOptions): Promise<FlowHandle<PayoutResult>> {
    return this.#start('sendPayout', `send-payout/${input.merOrderNo}`, input, opts);
  }

  async sendPayout(input: SendPayoutInput, opts?: StartOptions): Promise<PayoutResult> {
    return (await this.startSendPayout(input, opts)).result();
  }

  // --- Reads (through workflows: callers hold no provider credentials) ------------------

  async walletBalance(): Promise<WalletBalance> {
    return (await this.#start<undefined, WalletBalance>('walletBalance', readableId('wallet-balance'), undefined)).result();
  }

  async esimPlans(): Promise<EsimPlan[]> {
    return (await this.#start<undefined, EsimPlan[]>('esimPlans', readableId('esim-plans'), undefined)).result();
  }

  /** The eSIM's usage, read again only when the last read is a minute old, and its alerts. */
  esimUsage(esimNo: string): Promise<EsimWatchState> {
    return this.#updateWithStart(refreshEsimUsageUpdate, [], () => this.#entityStart('esim', esimNo));
  }

  /** What the eSIM's workflow recorded, without asking the provider. */
  esimWatch(esimNo: string): Promise<EsimWatchState> {
    return this.#temporal.workflow.getHandle(entityWorkflowId('esim', esimNo)).query(esimWatchQuery);
  }

  /** Sends the eSIM's state (alerts included) to a workflow of the caller's on every change, as `entityState` signals. */
  async subscribeToEsim(esimNo: string, subscriberWorkflowId: string): Promise<void> {
    await signalEntity(this.#temporal, this.#taskQueue, { kind: 'esim', entityId: esimNo }, subscribeSignal, [{ workflowId: subscriberWorkflowId }]);
  }

  // --- One card, through its workflow's updates ----------------------------------------

  freeze(cardId: string): Promise<CardView> {
    return this.#cardUpdate(cardId, freezeCardUpdate, []);
  }

  unfreeze(cardId: string): Promise<CardView> {
    return this.#cardUpdate(cardId, unfreezeCardUpdate, []);
  }

  delete(cardId: string): Promise<CardView> {
    return this.#cardUpdate(cardId, deleteCardUpdate, []);
  }

  setPin(cardId: string, pin: string): Promise<CardView> {
    return this.#cardUpdate(cardId, setPinUpdate, [{ pin }]);
  }

  updateContact(cardId: string, contact: ContactInput): Promise<CardView> {
    return this.#cardUpdate(cardId, updateContactUpdate, [contact]);
  }

  /** Funding as an operation of the card (serialised with its other operations). */
  /**
   * Funding as an operation of the card (serialised with its other operations). The update ID is
   * what makes a retry safe: `opts.updateId`, else one derived from the caller's idempotency key,
   * else a fresh one. It comes back on the result and on a thrown error (`updateId`): call again
   * with it after an answer was lost, and the card answers the first outcome, moving nothing twice.
   */
  fund(cardId: string, args: MoneyMovementArgs, opts: MoneyUpdateOptions = {}): Promise<MoneyUpdateResult> {
    return this.#moneyUpdate(cardId, fundCardUpdate, 'fund', args, opts);
  }

  withdraw(cardId: string, args: MoneyMovementArgs, opts: MoneyUpdateOptions = {}): Promise<MoneyUpdateResult> {
    return this.#moneyUpdate(cardId, withdrawFromCardUpdate, 'withdraw', args, opts);
  }

  async #moneyUpdate(
    cardId: string,
    update: typeof fundCardUpdate,
    verb: 'fund' | 'withdraw',
    args: MoneyMovementArgs,
    opts: MoneyUpdateOptions,
  ): Promise<MoneyUpdateResult> {
    // The amount is part of a keyed update's ID: the same key with another amount is not taken for a
    // repeat of the first call (Temporal answers a known update ID without asking the workflow), but
    // reaches the card workflow, which refuses it IdempotencyConflict.
    const updateId = opts.updateId ?? (args.idempotencyKey ? `${verb}-key-${args.idempotencyKey}/${args.amount}` : `${verb}-${randomUUID()}`);
    try {
      return { ...(await this.#cardUpdate(cardId, update, [args], updateId)), updateId };
    } catch (err) {
      throw Object.assign(err as Error, { updateId });
    }
  }

  /** The card workflow's view: masked card (no contact data), status, recent transactions. */
  async cardState(cardId: string): Promise<CardLifecycleState> {
    const state = await this.#temporal.workflow.getHandle(entityWorkflowId('card', cardId)).query(cardStateQuery);
    return { ...state, card: state.card ? toCardView(state.card as unknown as Record<string, unknown>) : undefined };
  }

  /**
   * Full PAN, CVV and expiry. The workflow hands back a value sealed with a key only this
   * client derives; it is opened here, so the plaintext is in no history and no codec server.
   * Never log the result.
   */
  async revealSensitive(cardId: string): Promise<CardSensitive> {
    const sealed = await this.#cardUpdate(cardId, revealSensitiveUpdate, []);
    return this.#sealer.unseal<CardSensitive>(sealed);
  }

  // --- Any flow ------------------------------------------------------------------------

  /** Where a flow stands: status, type, search attributes, pending activities, and its failure once failed. */
  status(workflowId: string): Promise<FlowStatus> {
    return describeFlow(this.#temporal.workflow.getHandle(workflowId));
  }

  /** Closes the connection when this client opened it. */
  async close(): Promise<void> {
    await this.#ownConnection?.close();
  }

  #entityStart(kind: 'esim', entityId: string): WithStartWorkflowOperation<Workflow> {
    return new WithStartWorkflowOperation<Workflow>('providerEntity', {
      workflowId: entityWorkflowId(kind, entityId),
      taskQueue: entityQueue(this.#taskQueue),
      args: [{ kind, entityId }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  }

  /**
   * A repeated start while the flow runs joins it (the caller wanted that flow, not a second one),
   * but only when it asks for the same thing: each run carries a digest of its input in its memo,
   * and another input under a running workflow ID is refused IdempotencyConflict. Every failure,
   * of the start or of the flow, carries the workflow ID (`workflowId`) to look at or retry with.
   */
  async #start<I, R>(workflowType: string, defaultId: string, input: I, opts: StartOptions = {}): Promise<FlowHandle<R>> {
    const workflowId = opts.workflowId ?? defaultId;
    const digest = requestDigest(workflowType, input);
    const withId = (err: unknown) => Object.assign(err as Error, { workflowId });
    const flow = (runId: string, handle: { result(): Promise<R> }): FlowHandle<R> => ({
      workflowId,
      runId,
      result: () => unwrapFailure(handle.result()).catch((err) => Promise.reject(withId(err))),
    });
    try {
      const handle = await this.#temporal.workflow.start<(input: I) => Promise<R>>(workflowType, {
        taskQueue: this.#taskQueue,
        workflowId,
        args: [input],
        memo: { [REQUEST_DIGEST_MEMO]: digest },
        workflowIdConflictPolicy: 'FAIL',
      });
      return flow(handle.firstExecutionRunId, handle);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw withId(err);
      const handle = this.#temporal.workflow.getHandle<(input: I) => Promise<R>>(workflowId);
      const running = await handle.describe();
      const theirs = running.memo?.[REQUEST_DIGEST_MEMO];
      if (theirs !== undefined && theirs !== digest) {
        throw withId(
          ApplicationFailure.create({
            type: FailureType.IdempotencyConflict,
            message: `workflow ${workflowId} is running for another request; this one was not started`,
            nonRetryable: true,
            details: [{ workflowId }],
          }),
        );
      }
      return flow(running.runId, handle);
    }
  }

  /** Update-with-start: the card's workflow is started if no run of it is open, so an operation never misses it. */
  #cardUpdate<Ret, Args extends unknown[]>(cardId: string, update: UpdateDefinition<Ret, Args>, args: Args, updateId?: string): Promise<Ret> {
    const startWorkflowOperation = (): WithStartWorkflowOperation<Workflow> =>
      new WithStartWorkflowOperation<Workflow>('cardLifecycle', {
        workflowId: entityWorkflowId('card', cardId),
        taskQueue: entityQueue(this.#taskQueue),
        args: [{ cardId }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
    return this.#updateWithStart(update, args, startWorkflowOperation, updateId);
  }

  /**
   * Every try under one update ID and with a start operation of its own (one is spent per call):
   * a try the server refused because the workflow was rolling over is sent again (update-with-start.ts).
   */
  #updateWithStart<Ret, Args extends unknown[]>(update: UpdateDefinition<Ret, Args>, args: Args, start: () => WithStartWorkflowOperation<Workflow>, updateId?: string): Promise<Ret> {
    return unwrapFailure(
      withStableUpdateId(updateId, (id) => this.#temporal.workflow.executeUpdateWithStart(update, { args, startWorkflowOperation: start(), updateId: id })),
    );
  }
}

/** A client with its own connection, from the validated configuration. */
export async function createCardIssuingClient(config: Pick<Config, 'temporal' | 'codec'>, opts: { tracing?: Tracing } = {}): Promise<CardIssuingClient> {
  const connection = await Connection.connect(clientConnectionOptions(config.temporal));
  const client = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: createDataConverter(config.codec),
    // With the process's tracing: each start, update and signal opens a span the workflow continues.
    interceptors: opts.tracing?.clientInterceptors(),
  });
  return new CardIssuingClient({ client, taskQueue: config.temporal.taskQueue, codec: config.codec }, connection);
}

/** The memo field holding a digest of a flow's input, for a repeated start to compare with. */
const REQUEST_DIGEST_MEMO = 'requestDigest';

/** SHA-256 of the workflow type and its input as canonical JSON: equal inputs, equal digests, whatever their key order. */
export function requestDigest(workflowType: string, input: unknown): string {
  return createHash('sha256').update(workflowType).update('\u0000').update(canonicalJson(input ?? null)).digest('hex');
}

/** e.g. `fund-card/crd_123/key_abc`; a random suffix when the caller gave no key. */
export function readableId(prefix: string, ...parts: Array<string | undefined>): string {
  const given = parts.filter((p): p is string => Boolean(p));
  const last = parts.length === 0 || parts[parts.length - 1] === undefined ? [randomUUID()] : [];
  return [prefix, ...given, ...last].join('/');
}

/** Re-throws the workflow's (or update's) ApplicationFailure instead of the SDK's wrapper. */
export async function unwrapFailure<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw applicationFailureOf(err) ?? err;
  }
}

/** The ApplicationFailure a flow or update ended with, whether wrapped or not. */
export function applicationFailureOf(err: unknown): ApplicationFailure | undefined {
  if (err instanceof ApplicationFailure) return err;
  if ((err instanceof WorkflowFailedError || err instanceof WorkflowUpdateFailedError) && err.cause instanceof ApplicationFailure) return err.cause;
  return undefined;
}

export interface FailureSummary {
  type: string;
  message: string;
  errors?: Record<string, string>;
}

/** Plain data for output: type, message and the provider's field errors, when present. */
export function summariseFailure(failure: ApplicationFailure): FailureSummary {
  const errors = (failure.details?.find((d) => d && typeof d === 'object' && 'errors' in d) as { errors?: Record<string, string> } | undefined)?.errors;
  return { type: failure.type ?? 'ApplicationFailure', message: failure.message, ...(errors ? { errors } : {}) };
}
