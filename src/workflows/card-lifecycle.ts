/**
 * cardLifecycle: one long-lived workflow per card (`card/<cardId>`). It receives the card's
 * webhooks (CARD_CREATED, CARD_TRANSACTION; GET /cards/{cardId} when issuance waits and
 * CARD_CREATED is late), runs every operation on the card one at a time as
 * an update whose validator refuses bad input before it is accepted, answers the card's state
 * and recent transactions by query, and continues-as-new before its history grows large.
 */
import { ApplicationFailure, currentUpdateInfo, makeContinueAsNewFunc, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { cardMoneyUpdateErrors, contactErrors, freshnessErrors, hasErrors, isDeleteUnderWay, toCardView } from '../shared/card-rules';
import { revealRequestErrors, sealedPinErrors } from '../shared/card-secrets';
import { capabilityErrors, UsedOnce, type CardAction, type WithCapability } from '../shared/card-capability';
import { FailureType, type FieldErrors } from '../shared/failures';
import {
  cardMoneyMovedSignal,
  cardReadSignal,
  cardMovementsQuery,
  cardStateQuery,
  deleteCardUpdate,
  freezeCardUpdate,
  fundCardUpdate,
  refreshCardBalanceUpdate,
  revealSensitiveUpdate,
  setPinUpdate,
  unfreezeCardUpdate,
  updateContactUpdate,
  withdrawFromCardUpdate,
} from '../shared/messages';
import { CARD_ID, FLOW_KIND, MONEY_MOVED_HOUR, hourOf } from '../shared/search-attributes';
import type { CardLifecycleState, CardTransaction, CardView, ContactInput, SealedPin, MoneyMovementKind, MoneyRequest, UpdateOutcome, WatchPlan } from '../shared/types';
import type { CardChange } from '../activities/cards';
import { EntityInbox, emptySnapshot, type InboxSnapshot } from './lib/entity-inbox';
import { DEFAULT_MAX_HISTORY_EVENTS, runEntityLoop, wireInbox } from './lib/entity-loop';
import { EntityWatch } from './lib/entity-watch';
import { moveMoney } from './lib/money-movement';
import { CardBalance, type BalanceRead } from './lib/card-balance';
import { DeletionFollower, deleteAttempt, openDeleteItem, type DeletionFollow } from './lib/card-deletion';
import { applicationCause, providerCalls } from './lib/provider';
import { openItem } from './lib/open-items';
import { itemOf } from './lib/open-item-of';
import { isUnknownOutcomeType } from '../shared/outcome-unknown';
import { CARD_ACTION_PRIORITY } from '../shared/task-queues';
import { declareVersioning } from './lib/versioning';
import { trustedSignal, trustedStart } from './lib/trusted-signal';
import { answerAgain, carriedSnapshot, idleReadMsOf, recordTransaction, refuseUnauthorised, refuseWhileOverdue, rejectIf, serialiser } from './lib/card-handlers';

/** Money movements answered by update ID, carried across continue-as-new; the oldest are forgotten first. */
const MAX_REMEMBERED_UPDATES = 500;

/**
 * Updates refused locally: only a DELETED card ("permanently close"; the workflow ends there). A
 * DELETING card's updates go to the provider, which decides (the spec shows no transitions).
 */
const CLOSED_STATUSES = ['DELETED'];

export interface CardLifecycleInput {
  cardId: string;
  snapshot?: InboxSnapshot;
  /** The fallback poll under way (issuance), carried across continue-as-new. */
  watch?: WatchPlan;
  recentTransactions?: CardTransaction[];
  operationsApplied?: number;
  /** Outcomes of recent money-movement updates by update ID. */
  updateOutcomes?: Array<[string, UpdateOutcome]>;
  lingerMs?: number;
  maxHistoryEvents?: number;
  /** The card's last balance read from the provider (lib/card-balance.ts). */
  balanceRead?: BalanceRead;
  /** The run before asked for a read it did not make (a movement's, card-balance.ts): this run makes it at once. */
  balanceReadDue?: boolean;
  /** When the card last moved money (card-balance.ts): the view is stale until a read that started later. */
  lastMovedAt?: number;
  /** How long a stale view nobody asks about waits for its read (card-balance.ts IDLE_READ_MS, 30 s); tests shorten it. */
  balanceIdleReadMs?: number;
  /** When the run before's idle read of a stale view was due (card-balance.ts IDLE_READ_MS): this run keeps the time. */
  balanceIdleReadAt?: number;
  /** The follow of a deleted card to DELETED (lib/card-deletion.ts), carried across continue-as-new. */
  deletionFollow?: DeletionFollow;
  /** Capability nonces and PIN boxes this card accepted, each until its expiry: none is accepted twice. */
  usedOnce?: Array<[string, number]>;
}

export async function cardLifecycle(started: CardLifecycleInput): Promise<CardLifecycleState> {
  const input = trustedStart(started, ['cardId', 'lingerMs', 'maxHistoryEvents', 'balanceIdleReadMs']);
  const { cardId } = input;
  const inbox = new EntityInbox(input.snapshot ?? emptySnapshot('card', cardId));
  const transactions = [...(input.recentTransactions ?? [])];
  let operationsApplied = input.operationsApplied ?? 0;
  const outcomes = new Map<string, UpdateOutcome>(input.updateOutcomes ?? []);
  /** Money updates accepted and not yet answered, by update ID: a conflicting repeat is refused while they run too. */
  const running = new Map<string, MoneyRequest>();
  const remember = (updateId: string | undefined, outcome: UpdateOutcome) => {
    if (updateId === undefined) return;
    outcomes.set(updateId, { ...outcome, at: Date.now() });
    if (outcomes.size > MAX_REMEMBERED_UPDATES) outcomes.delete(outcomes.keys().next().value as string);
    // The hour this card last moved money: reconcile-money finds the card workflows to ask (cardMovementsQuery).
    const hour = hourOf(Date.now());
    if (workflowInfo().typedSearchAttributes.get(MONEY_MOVED_HOUR) !== hour) upsertSearchAttributes([{ key: MONEY_MOVED_HOUR, value: hour }]);
  };
  const general = providerCalls('general');
  const sensitive = providerCalls('sensitive');
  // A card action's read-back is part of the action a person waits for: it goes before the flows' card reads
  // (issuance polls), as the action itself does (shared/task-queues.ts CARD_ACTION_PRIORITY).
  const readBack = providerCalls('general', { priority: { priorityKey: CARD_ACTION_PRIORITY } });

  const watch = new EntityWatch(inbox, input.watch);
  const balance = new CardBalance(cardId, inbox, input.balanceRead, input.lastMovedAt, idleReadMsOf(input.balanceIdleReadMs));
  const deletion = new DeletionFollower(inbox, balance, input.deletionFollow);
  wireInbox(inbox, watch, (event) => {
    recordTransaction(transactions, event);
    if (event.eventType === 'CARD_TRANSACTION') void balance.refresh();
  });
  // A standalone fundCard/withdrawFromCard on this card completed: like the card's own movements, it marks the view stale.
  setHandler(
    cardMoneyMovedSignal,
    trustedSignal('cardMoneyMoved', () => balance.moved()),
  );
  setHandler(cardReadSignal, trustedSignal('cardRead', ({ card, readAt }: { card: CardView; readAt: number }) => balance.apply(card, readAt)));
  upsertSearchAttributes([
    { key: FLOW_KIND, value: 'cardLifecycle' },
    { key: CARD_ID, value: cardId },
  ]);
  const state = (): CardLifecycleState => ({
    cardId,
    // The view is the card's allowlisted fields (toCardView): a CARD_CREATED webhook's contact data (email, mobile, billing address) never reaches a caller.
    ...balance.view(inbox.state.data ? toCardView({ ...inbox.state.data, cardId }) : undefined),
    ...balance.freshness(),
    status: inbox.state.status,
    recentTransactions: [...transactions],
    operationsApplied,
  });
  setHandler(cardStateQuery, state);
  setHandler(cardMovementsQuery, () => [...outcomes].map(([updateId, outcome]) => ({ updateId, ...outcome })));

  const serialise = serialiser();
  const used = new UsedOnce(input.usedOnce);
  /**
   * A card action's authority, checked twice: by its validator before the update is accepted (a bare
   * or misbound request never enters history), and here, as the accepted update runs, where its
   * nonce (and a PIN's box) is spent. The signature is the activity's to check, before any provider call.
   */
  const authorised = (action: CardAction, request: WithCapability | undefined) => {
    if (request?.capability === undefined) return; // accepted before capabilities (replay): the activity refuses it when it runs anew
    refuseUnauthorised(onceErrors(request));
    used.add(`nonce/${request.capability.nonce}`, request.capability.exp);
    const box = (request as { pin?: { enc?: string; exp?: number } }).pin;
    if (action === 'pin' && box?.enc) used.add(`pin/${box.enc}`, box.exp ?? request.capability.exp);
  };
  const onceErrors = (request: WithCapability): FieldErrors => {
    const box = (request as { pin?: { enc?: string } }).pin;
    return {
      ...(used.has(`nonce/${request.capability.nonce}`) ? { 'capability.nonce': 'was used on this card already: a capability serves one request' } : {}),
      ...(box?.enc && used.has(`pin/${box.enc}`) ? { pin: 'this sealed PIN was sent to this card already: seal the PIN again' } : {}),
    };
  };
  /** The validator's half: the request's own rule, then its capability: there, bound to this card, action and request, unexpired and unused. */
  const allowed = <R extends WithCapability>(action: CardAction, requestErrors: (request: R | undefined) => FieldErrors = () => ({})) => (request: R | undefined) => {
    open();
    rejectIf(requestErrors(request));
    const errors = capabilityErrors(request, { cardId, action, now: Date.now() });
    refuseUnauthorised(hasErrors(errors) ? errors : onceErrors(request!));
  };
  const change = (request: CardChange) =>
    serialise(async () => {
      // A card action's answer is not read (its shape is not shown; any 2xx is success): the card's state comes from GET /cards/{cardId} after it.
      const card = await applyThenRead(request);
      inbox.set(card.status, { ...card }, Date.now());
      operationsApplied++;
      return card;
    });
  /**
   * The action, then the card as GET /cards/{cardId} answers it. A delete that failed may still have
   * taken effect (an earlier attempt's answer lost, every retry 5xx, a repeat refused): the card is
   * read back whatever the DELETE's fate. DELETING or DELETED answers the update (the follow then
   * takes the view to DELETED and the balance the provider returned); a card the delete did not
   * reach, or a read that failed too, fails it with the DELETE's failure.
   */
  const applyThenRead = async (request: CardChange): Promise<CardView> => {
    try {
      await general.applyCardChange(request);
    } catch (err) {
      // A refused capability reached no provider: nothing to read back.
      if (request.action !== 'delete' || applicationCause(err)?.type === FailureType.Unauthorized) throw err;
      // What it reads settles the delete's attempt (activities/cards.ts getCard); a delete that may have taken effect and reads nothing is an open item.
      const card = await readBack.getCard({ cardId, ...(request.attempt ? { deleteAttempt: request.attempt.owner } : {}) }).catch(() => undefined);
      if (!card || !isDeleteUnderWay(card.status)) {
        if (card) inbox.set(card.status, { ...card }, Date.now());
        else await openDeleteItem(request, err);
        throw err;
      }
      return card;
    }
    // The change took effect (a delete returns the balance to the wallet): a read back that fails for good says so, never that nothing happened.
    return readBack.getCard({ cardId }).catch(async (err: unknown) => {
      const cause = applicationCause(err);
      if (!cause) throw err;
      const failure = ApplicationFailure.create({
        type: cause.type ?? undefined,
        message: `the ${request.action} of card ${cardId} took effect; reading the card back failed (${cause.type}: ${cause.message})`,
        nonRetryable: true,
        details: [{ cardId, action: request.action, mayHaveTakenEffect: true }],
      });
      if (request.action === 'delete') await openDeleteItem(request, failure);
      throw failure;
    });
  };
  const move = (kind: MoneyMovementKind) => (args: { amount: number; idempotencyKey?: string; timings?: object }) => {
    const updateId = currentUpdateInfo()?.id;
    const request: MoneyRequest = { kind, amount: args.amount, ...(args.idempotencyKey === undefined ? {} : { idempotencyKey: args.idempotencyKey }) };
    if (updateId !== undefined) running.set(updateId, request);
    return serialise(async () => {
      const earlier = updateId === undefined ? undefined : outcomes.get(updateId);
      if (earlier) return answerAgain(earlier);
      // A keyless movement's key comes from its update ID, what the caller repeats on retry.
      const scope =
        updateId !== undefined
          ? `${workflowInfo().workflowId}/${kind}/update/${updateId}`
          : `${workflowInfo().workflowId}/${kind}/${args.idempotencyKey ?? operationsApplied}`;
      try {
        const owner = { workflowId: workflowInfo().workflowId, runId: workflowInfo().runId, updateId: updateId ?? `key/${args.idempotencyKey ?? operationsApplied}` };
        const result = await moveMoney(kind, { ...args, cardId }, scope, { owner });
        // The answer goes once the money moved; the view is read when someone asks for it (card-balance.ts).
        balance.moved();
        remember(updateId, { result, request });
        operationsApplied++;
        return result;
      } catch (err) {
        if (err instanceof ApplicationFailure) remember(updateId, { failure: { type: err.type ?? undefined, message: err.message, details: [...(err.details ?? [])] }, request });
        // docs/idempotency.md "Open items": a movement that ends not knowing what moved opens its item, settled by update ID or key.
        if (err instanceof ApplicationFailure && isUnknownOutcomeType(err.type)) {
          const flowKind = kind === 'funding' ? 'fundCard' : 'withdrawFromCard';
          const owner = { workflowId: workflowInfo().workflowId, updateId: updateId ?? `key/${args.idempotencyKey ?? operationsApplied}` };
          await openItem(itemOf({ flowKind, owner, input: { ...args, cardId }, details: err.details ?? [], reason: err.type!, keyScope: scope }));
        }
        throw err;
      } finally {
        if (updateId !== undefined) running.delete(updateId);
      }
    });
  };
  /**
   * Same update ID or same caller key, another request: IdempotencyConflict, refused before it is
   * accepted (a validator writes nothing to history, so this needs no marker).
   */
  const sameRequest = (kind: MoneyMovementKind, args: { amount?: number; idempotencyKey?: string }) => {
    const asked: MoneyRequest = { kind, amount: args?.amount as number, idempotencyKey: args?.idempotencyKey };
    const updateId = currentUpdateInfo()?.id;
    const byId = updateId === undefined ? undefined : (running.get(updateId) ?? outcomes.get(updateId)?.request);
    const earlier = [...(byId ? [byId] : []), ...(asked.idempotencyKey === undefined ? [] : requestsUnderKey(asked.idempotencyKey))];
    const other = earlier.find((r) => r.kind !== asked.kind || r.amount !== asked.amount);
    if (other) {
      throw ApplicationFailure.create({
        type: FailureType.IdempotencyConflict,
        message: `${updateId !== undefined && byId ? `update ID ${updateId}` : `idempotency key ${asked.idempotencyKey}`} was used for a ${other.kind} of ${other.amount} cents; this ${kind} of ${asked.amount} cents moves nothing`,
        details: [{ updateId, idempotencyKey: asked.idempotencyKey, earlier: other }],
        nonRetryable: true,
      });
    }
  };
  const requestsUnderKey = (key: string): MoneyRequest[] =>
    [...running.values(), ...[...outcomes.values()].map((o) => o.request)].filter((r): r is MoneyRequest => r?.idempotencyKey === key);
  const maxHistory = input.maxHistoryEvents ?? DEFAULT_MAX_HISTORY_EVENTS;
  const open = () => (refuseWhileOverdue(cardId, maxHistory), rejectIf(CLOSED_STATUSES.includes(inbox.state.status ?? '') ? { cardId: `card is ${inbox.state.status}` } : {}));

  // Each card action acts only with its capability (shared/card-capability.ts); `authorised` spends it as the update runs.
  const act = (action: 'freeze' | 'unfreeze' | 'delete') => (request?: WithCapability) =>
    (authorised(action, request), change({ cardId, action, capability: request?.capability, ...(action === 'delete' ? deleteAttempt(state().card?.availableBalance) : {}) }));
  setHandler(freezeCardUpdate, act('freeze'), { validator: allowed('freeze') });
  setHandler(unfreezeCardUpdate, act('unfreeze'), { validator: allowed('unfreeze') });
  // The provider says DELETING and no webhook tells when it is DELETED: the workflow reads until then.
  setHandler(deleteCardUpdate, (request) => act('delete')(request).then((card) => (deletion.follow(true), card)), { validator: allowed('delete') });
  // A PIN arrives sealed to the workers' key and bound to this card (shared/card-secrets.ts): one in clear is refused before the update is recorded, so it never enters history.
  setHandler(setPinUpdate, (request) => (authorised('pin', request), change({ cardId, action: 'pin', pin: request.pin, capability: request.capability })), {
    validator: allowed<WithCapability<{ pin: SealedPin }>>('pin', (request) => sealedPinErrors(request?.pin, 'pin', Date.now())),
  });
  setHandler(updateContactUpdate, (request) => (authorised('contact', request), change({ cardId, action: 'contact', contact: contactOf(request), capability: request?.capability })), {
    validator: allowed('contact', (request) => contactErrors(contactOf(request))),
  });
  // A money update without the caller's key is refused ValidationFailed naming idempotencyKey (issue 51): its key could
  // only come from its update ID, which a raw client that sets none draws anew on every retry. Refused by the validator,
  // before it is accepted: a validator writes nothing to history, so this needs no version marker, and a run that
  // replays an earlier keyless update (accepted before this rule) does not run the validator again.
  setHandler(fundCardUpdate, move('funding'), {
    validator: (args) => (open(), rejectIf(cardMoneyUpdateErrors('funding', { ...args, cardId })), sameRequest('funding', args)),
  });
  setHandler(withdrawFromCardUpdate, move('withdrawal'), {
    validator: (args) => (open(), rejectIf(cardMoneyUpdateErrors('withdrawal', { ...args, cardId })), sameRequest('withdrawal', args)),
  });
  // A view fresher than `maxAgeMs`, read through the card's rate queue only when the one held is older or a movement happened since.
  setHandler(
    refreshCardBalanceUpdate,
    async ({ maxAgeMs }) => {
      if (!CLOSED_STATUSES.includes(inbox.state.status ?? '')) await balance.readWithin(maxAgeMs);
      return state();
    },
    { validator: (request) => (refuseWhileOverdue(cardId, maxHistory), rejectIf(freshnessErrors(request))) },
  );
  // Sealed by the activity to the requester's one-time key: neither the activity result nor the update result opens with any key but the requester's.
  setHandler(revealSensitiveUpdate, (request) => (authorised('reveal', request), serialise(() => sensitive.revealSensitiveCard({ cardId, publicKey: request?.publicKey, capability: request?.capability }))), {
    validator: allowed('reveal', revealRequestErrors),
  });

  // A run continued while the card was DELETING goes on following it, and one continued before its read made it.
  deletion.follow();
  if (input.balanceReadDue) void balance.refresh();
  if (input.balanceIdleReadAt !== undefined) balance.readWhenIdle(input.balanceIdleReadAt);
  await runEntityLoop(inbox, {
    isFinal: () => inbox.state.status === 'DELETED',
    lingerMs: input.lingerMs,
    maxHistoryEvents: input.maxHistoryEvents,
    continueAsNew: (options) =>
      makeContinueAsNewFunc<typeof cardLifecycle>(options)({
        ...input,
        snapshot: carriedSnapshot(inbox.snapshot(), cardId),
        watch: watch.plan,
        recentTransactions: transactions,
        operationsApplied,
        updateOutcomes: [...outcomes],
        balanceRead: balance.last,
        // A read asked for and not made yet is made by the next run at once: rolling over never waits for it.
        ...(balance.pending() ? { balanceReadDue: true } : {}),
        lastMovedAt: balance.lastMovedAt,
        balanceIdleReadAt: balance.idleReadDueAt(),
        deletionFollow: deletion.state,
        usedOnce: used.entries(Date.now()),
      }),
  });
  return state();
}

/** A contact change's fields, without the capability that allows it. */
function contactOf(request: WithCapability<ContactInput> | undefined): ContactInput {
  const { capability: _allowedBy, ...contact } = request ?? ({} as WithCapability<ContactInput>);
  return contact;
}

// docs/versioning.md: lives as long as its card, pinned to each run's build; moves to a new build at a continue-as-new (lib/entity-loop.ts).
declareVersioning('PINNED', cardLifecycle);
