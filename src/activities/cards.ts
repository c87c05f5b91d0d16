/**
 * Card activities: BINs (cached), issuance, reads, the card's later life, and the sealed sensitive read.
 *
 * | POST /cards (key optional; a success is cached 24 h, a failure releases the key) | |
 * |---|---|
 * | key | the caller's, else derived from the workflow ID (`card`) |
 * | retry, crash, 5xx, timeout, answer cut off | POST again under the same key: within 24 h the provider answers the same card; the flow bounds attempts by time (under 24 h), then ends OutcomeUnknown |
 * | a later attempt refused (403, 404, 400 other than a stale BIN… any refusal but the key's own 409s) after one that may have created the card | OutcomeUnknown under the key, `mayHaveTakenEffect: true`, and the flow's open item: the refusal says nothing of the earlier attempt (issue 51, case 1) |
 * | the PIN no longer opens (its key pair deleted between attempts) | first attempt: ValidationFailed naming the key id, nothing posted; after an attempt that may have posted: OutcomeUnknown under the key, `mayHaveTakenEffect: true`, and the flow's open item |
 * | re-scheduled after 429s (each a fresh schedule-to-close window) for longer than the key's 24 h | every attempt carries the run's first POST time (`postBy` = it + 23 h): past it, nothing is posted, OutcomeUnknown and an open item (issue 39, case 8) |
 * | the card exists but the flow cannot say it is ENABLE (CREATING at the deadline, the earlier run's card refused on read, cancelled, terminated) | `mayHaveTakenEffect: true` with the cardId and an open item on the card, closed by its status (ENABLE: moved; FAILED: not) or an operator's `settle`; without a cardId the spec gives no lookup, so only the operator closes it |
 * | restart of the workflow ID, key derived | an earlier run's card (its CardId) is taken, nothing posted; an earlier run that posted but recorded no card: POST under its key within 24 h of it, else OutcomeUnknown |
 * | restart of the workflow ID, the caller's key (`issue-card/<key>`), even after the provider's 24 h | the same, among the earlier runs that were given the same key (their start input): their card is taken, nothing posted (issue 29, case 5: a POST after 24 h made a second card and moved initialAmount again); one that posted under it more than 24 h ago and recorded no card: OutcomeUnknown |
 */
import { recordAttempt, recordAttemptOfRun, settleAttemptOf, tellAttempt, tellAttemptLearned } from './attempts';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ProviderClient } from '../provider/client';
import { isProviderError, localValidationFailed, type ProviderError } from '../provider/errors';
import { everyDerivedKey } from '../shared/ids';
import { FailureType } from '../shared/failures';
import type { BinCache } from '../provider/bin-cache';
import type { CardBinAnswer } from '../provider/answers';
import { CardSecretError, sealReveal, type PinOpener } from '../codec/card-secrets';
import type { CardActionVerifier } from '../codec/card-capability';
import type { CardCapability } from '../shared/card-capability';
import { requireCapability } from './card-authority';
import { createCardBody, isDeleteUnderWay, toCardView } from '../shared/card-rules';
import type { CardView, ContactInput, IssueCardInput, SealedPin, SealedReveal } from '../shared/types';
import { ATTEMPT_WATCH_MS, type AttemptOf, type OpenItemOwner } from '../shared/open-items';
import type { KeyOrigin } from './earlier-key';
import { earlierDerivedPost, earlierRunInput, earlierRunPost, earlierRunsOfThisWorkflow, type EarlierRun } from './earlier-runs';
import { outcomeUnknown, refusedAfterAnEffect } from './idempotent-post';
import { earlierAttemptMayHaveTakenEffect, logExtraFields, providerCall, toApplicationFailure } from './provider-call';

/** How long the provider answers a POST /cards key with its first card (spec: 24 h). */
export const CARD_KEY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * A card action as the card workflow schedules it, with the capability that allows it (none in histories
 * from before capabilities) and, for a delete, its attempt (issue 51): recorded before the DELETE, which
 * returns the card's balance (`amount`, as the card workflow last read it) to the wallet. None in histories from before.
 */
export type CardChange = { capability?: CardCapability; attempt?: AttemptOf; amount?: number } & (
  | { cardId: string; action: 'freeze' | 'unfreeze' | 'delete' }
  // A PIN in clear: a change a card workflow scheduled before PINs were sealed (2.0), already in its history.
  | { cardId: string; action: 'pin'; pin: SealedPin | string }
  | { cardId: string; action: 'contact'; contact: ContactInput }
);

export interface CardActivityDeps {
  provider: ProviderClient;
  temporal: Client;
  bins: BinCache<CardBinAnswer>;
  /** Opens the PINs callers sealed to the workers' key: here, in the activity that sends them, and nowhere else. */
  pins: PinOpener;
  /** The allow-list of services that may act on a card (CARD_ACTION_TRUSTED_KEYS). */
  cardActions: CardActionVerifier;
  /** The soonest an open item asks the provider (OPEN_ITEM_MIN_ASK_MS): a card created with its initialAmount is recorded as an attempt before its POST. */
  openItemMinAskMs: number;
}

export function createCardActivities({ provider, temporal, bins, pins, cardActions, openItemMinAskMs }: CardActivityDeps) {
  return {
    /** The BIN from the 24 h cache (refreshed at once when asked); null when the project has no such BIN. */
    async getCardBin({ cardBinId, refresh }: { cardBinId: string; refresh?: boolean }): Promise<CardBinAnswer | null> {
      return providerCall(async () => {
        if (refresh) bins.invalidate();
        return (await bins.get(cardBinId)) ?? null;
      });
    },

    /** `postBy` (epoch ms): past it the run's first POST is too old for the provider to answer its key with its card; nothing is posted. */
    async createCard({ input, idempotencyKey, keyOrigin, postBy, sentBefore }: { input: IssueCardInput; idempotencyKey: string; keyOrigin?: KeyOrigin; postBy?: number; sentBefore?: boolean }): Promise<CardView> {
      return providerCall(async () => {
        // Every key origin: a caller's key is forgotten by the provider after 24 h as a derived one is.
        const earlier = await cardOfEarlierRun(temporal, keyOrigin ?? { callerKey: idempotencyKey });
        if (earlier?.cardId) return readEarlierCard(provider, earlier.cardId, idempotencyKey);
        const key = earlier?.idempotencyKey ?? idempotencyKey;
        if (postBy !== undefined && Date.now() > postBy) {
          throw outcomeUnknown(
            { idempotencyKey: key, endpoint: 'POST /cards' },
            `this run's first POST was scheduled before ${new Date(postBy).toISOString()}, so close to the provider's 24 h for the key that a POST now could create a second card`,
          );
        }
        const { pin: sealed, ...rest } = input;
        const pin = sealed === undefined ? {} : { pin: await openIssuedPin(pins, sealed, key) };
        const maySent = sentBefore === true || earlierAttemptMayHaveTakenEffect();
        // The card and its initialAmount may exist from here on: recorded first, so no stop of the flow loses them (issue 51).
        await recordAttemptOfRun({ temporal, openItemMinAskMs }, { idempotencyKey: key, amount: input.initialAmount });
        try {
          const card = toCardView(await provider.createCard(createCardBody({ ...rest, ...pin }), { idempotencyKey: key }));
          // Its item, should the flow stop before it records the card, asks about this card.
          await tellAttemptLearned(temporal, { cardId: card.cardId });
          return card;
        } catch (err) {
          // The BIN list changed under us: refresh it now, so the workflow's next lookup sees the provider's list.
          // A failed refresh leaves the cache empty (the next lookup asks again) and must not hide the StaleCardBin.
          await bins.noteCreateCardFailure(err).catch(() => undefined);
          // After an attempt that may have created the card, a refusal of this one says nothing of it (issue 51, case 1).
          if (maySent && isProviderError(err)) refusedAfterAnEffect({ idempotencyKey: key, endpoint: 'POST /cards' }, err);
          // Within 24 h the same key answers the card the cut-off answer was about: asked again, not given up.
          if (isProviderError(err, 'InvalidResponse')) throw unreadableCard(key);
          throw err;
        }
      });
    },

    /** `deleteAttempt`: the card workflow reads the card back after its DELETE failed; what it reads is told to the delete's attempt (DELETING or DELETED: moved; ENABLE or DISABLE: not). */
    async getCard({ cardId, deleteAttempt }: { cardId: string; deleteAttempt?: OpenItemOwner }): Promise<CardView> {
      const card = await providerCall(async () => toCardView(await provider.getCard(cardId)));
      if (deleteAttempt) await tellAttempt(temporal, deleteAttempt, 'cardDeletion', String(card.status));
      return card;
    },

    /**
     * The action alone (freeze, unfreeze, PIN, contact, delete). Any 2xx is success whatever its
     * body; the card's state is read afterwards with getCard (card-lifecycle.ts).
     *
     * DELETE /cards/{cardId} is the one action that moves money: the provider returns the card's
     * whole balance to the wallet when the deletion completes.
     *
     * | DELETE /cards/{cardId} (no key in the spec; "permanently close") | |
     * |---|---|
     * | key | none: the card is the key, and a deletion moves its whole balance once |
     * | 5xx, timeout, network error (may have taken effect) | the attempt reads GET /cards/{cardId}: DELETING or DELETED means a DELETE took effect, and the delete succeeds; otherwise the attempt fails as the DELETE did |
     * | retry, crash, answer cut off | DELETE again (the card workflow's retry policy): a card already DELETING or DELETED has nothing left to move, so a repeat moves no money (the sandbox answers it as a no-op) |
     * | a repeat refused (4xx) after an attempt that may have taken effect | the refusal, marked `mayHaveTakenEffect: true`: it says nothing of the earlier DELETE |
     * | retries run out, or a repeat is refused (4xx) | the card workflow reads the card back and follows it to DELETED whatever the DELETE's fate (issue 29, case 7: before, the update failed and the view said ENABLE with the old balance until reconcile-cards); a card read DELETING or DELETED answers the update, one still ENABLE or DISABLE fails it with the DELETE's failure |
     * | restart of the workflow ID | the card workflow is per card and long-lived; a delete is an update on it, sent again only if the caller sends it again, and the validator refuses it once the card is DELETED |
     * | after it | the card workflow reads GET /cards/{cardId} until DELETED (lib/card-deletion.ts): reads only |
     * | the attempt (issue 51) | recorded before the first DELETE (`deleteCard`, the card workflow's run and update ID, the balance the view knows; a retry finds it there); settled "moved" by a 2xx or a read-back DELETING or DELETED, here or in the card workflow's read-back (`getCard`), "not moved" by that read-back's ENABLE or DISABLE; an update that ends unsure opens it as the item, asking GET /cards/{cardId}; a card workflow stopped mid-delete makes it the item at once |
     */
    async applyCardChange(change: CardChange): Promise<void> {
      requireCapability(cardActions, change.cardId, change.action, argsOf(change), change.capability);
      if (change.action !== 'delete') return providerCall(() => applyChange(provider, change, pins));
      const { attempt } = change;
      // The balance may go back to the wallet from the DELETE on: recorded first, so no stop of the card workflow loses it.
      const record = attempt && (() => recordAttempt({ temporal, openItemMinAskMs }, deleteAttemptOf(attempt, openItemMinAskMs), { cardId: change.cardId, ...(change.amount === undefined ? {} : { amount: change.amount }) }));
      const readBack = await providerCall(() => deleteOrReadBack(provider, change.cardId, record));
      if (!attempt) return;
      if (readBack === undefined) await settleAttemptOf(temporal, attempt.owner, { verdict: 'moved', providerSaid: 'DELETE_ANSWERED' });
      else await tellAttempt(temporal, attempt.owner, 'cardDeletion', readBack);
    },

    /**
     * Kept for card workflows that scheduled it before CARD_STATE_FROM_GET_PATCH: the action,
     * then the card as GET /cards/{cardId} answers it (never the action's own answer).
     */
    async changeCard(change: CardChange): Promise<CardView> {
      requireCapability(cardActions, change.cardId, change.action, argsOf(change), change.capability);
      return providerCall(async () => {
        await applyChange(provider, change, pins);
        return toCardView(await provider.getCard(change.cardId));
      });
    },

    /**
     * The PAN and CVV leave this activity only sealed to the requester's one-time public key. A
     * request without one (accepted by a card workflow before 2.0) is refused before the provider
     * is asked: the symmetric card-seal key it would have been sealed with is retired.
     */
    async revealSensitiveCard({ cardId, publicKey, capability }: { cardId: string; publicKey?: string; capability?: CardCapability }): Promise<SealedReveal> {
      requireCapability(cardActions, cardId, 'reveal', { publicKey }, capability);
      return providerCall(async () => {
        if (publicKey === undefined) throw localValidationFailed('GET /cards/{cardId}/sensitive', { publicKey: "is required: reveals are sealed to the requester's one-time key since 2.0; reveal again with a current client" });
        return sealReveal(await provider.getSensitiveCard(cardId), cardId, publicKey);
      });
    },
  };
}

/** The request's arguments as its capability binds them (card-lifecycle.ts sends them so). */
function argsOf(change: CardChange): object {
  if (change.action === 'pin') return { pin: change.pin };
  if (change.action === 'contact') return change.contact;
  return {};
}

async function applyChange(provider: ProviderClient, change: CardChange, pins: PinOpener): Promise<void> {
  switch (change.action) {
    case 'freeze':
      return provider.freezeCard(change.cardId);
    case 'unfreeze':
      return provider.unfreezeCard(change.cardId);
    case 'delete':
      return provider.deleteCard(change.cardId);
    case 'pin':
      return provider.updatePin(change.cardId, { pin: await openPin(pins, change.pin, 'POST /cards/{cardId}/pin') });
    case 'contact':
      logExtraFields('updateCardContact', change.contact.extra);
      return provider.updateContact(change.cardId, change.contact);
  }
}

/** A sealed PIN opened; one it cannot open fails the call ValidationFailed naming the key id (never the PIN), before any POST. */
async function openPin(pins: PinOpener, pin: SealedPin | string, endpoint: string): Promise<string> {
  if (typeof pin === 'string') return pin;
  try {
    // Bound to the workflow it was sent to: a box copied from another card's history does not open here.
    return await pins.open(pin, Context.current().info.workflowExecution?.workflowId ?? '');
  } catch (err) {
    if (err instanceof CardSecretError) throw localValidationFailed(endpoint, { pin: err.message });
    throw err;
  }
}

/**
 * The PIN of a POST /cards. One that no longer opens (its key pair deleted between attempts) after an
 * earlier attempt may have created the card is no refusal: that card and its initialAmount may exist,
 * so the call ends OutcomeUnknown under its key and the flow's open item follows it.
 */
async function openIssuedPin(pins: PinOpener, pin: SealedPin | string, key: string): Promise<string> {
  try {
    return await openPin(pins, pin, 'POST /cards');
  } catch (err) {
    if (!earlierAttemptMayHaveTakenEffect()) throw err;
    throw outcomeUnknown({ idempotencyKey: key, endpoint: 'POST /cards' }, "an earlier attempt may have created the card, and its PIN no longer opens with the workers' keys");
  }
}

/** Where the key of a POST /cards came from: derived from the workflow ID, or given by the caller. */
type CardKeyOrigin = KeyOrigin | { callerKey: string };

/**
 * DELETE (its attempt recorded just before, `beforeSend`); when its answer was lost in a way that may
 * have let it take effect (5xx, timeout, network), the card is read back: a card DELETING or DELETED was
 * deleted (by this call or an earlier one), so the delete succeeded; else the DELETE's own failure goes
 * up for Temporal to retry. A failed read hides nothing: the DELETE's failure goes up as it came.
 * Returns the status read back, or undefined when the DELETE itself was answered 2xx.
 */
async function deleteOrReadBack(provider: ProviderClient, cardId: string, beforeSend?: () => Promise<void>): Promise<string | undefined> {
  await beforeSend?.();
  try {
    await provider.deleteCard(cardId);
    return undefined;
  } catch (err) {
    // A repeat refused (a 404 from a provider that deleted the card on an earlier attempt whose answer was lost) says nothing of that attempt.
    if (isProviderError(err) && !err.retryable && !err.mayHaveTakenEffect && earlierAttemptMayHaveTakenEffect()) throw refusedAfterADelete(err);
    if (!isProviderError(err) || !err.mayHaveTakenEffect) throw err;
    const status = await provider.getCard(cardId).then(
      (card) => String(card.status),
      () => undefined,
    );
    if (!isDeleteUnderWay(status)) throw err;
    return status;
  }
}

/** The refusal as it came, saying that an earlier DELETE of this activity may have deleted the card: the card workflow reads it back, and opens the delete's item if it cannot. */
function refusedAfterADelete(err: ProviderError): ApplicationFailure {
  const failure = toApplicationFailure(err);
  const [details] = (failure.details ?? []) as Array<Record<string, unknown>>;
  return ApplicationFailure.create({
    type: failure.type ?? undefined,
    message: `${failure.message} (a repeat of a DELETE an earlier attempt of which may have deleted the card)`,
    nonRetryable: true,
    details: [{ ...details, mayHaveTakenEffect: true }],
  });
}

/**
 * A delete carries no timings of its own, and a deletion completes in seconds: its attempt watches its
 * card workflow at the items' pace when that is the faster, and the item it may become asks its card
 * from the items' floor on (one GET /cards/{cardId} each time).
 */
function deleteAttemptOf(attempt: AttemptOf, openItemMinAskMs: number): AttemptOf {
  return { ...attempt, watchMs: attempt.watchMs ?? Math.min(ATTEMPT_WATCH_MS, openItemMinAskMs), cadence: attempt.cadence ?? { firstAskMs: openItemMinAskMs } };
}

/**
 * What an earlier run of this workflow ID that posted for this request left: the card it recorded
 * (CardId), or the key it posted under when it recorded none and the provider still answers that key.
 */
async function cardOfEarlierRun(temporal: Client, origin: CardKeyOrigin): Promise<{ cardId?: string; idempotencyKey?: string } | undefined> {
  const runs = await runsForThisRequest(temporal, origin);
  const withCard = runs.find((r) => r.cardId !== undefined);
  if (withCard) return { cardId: withCard.cardId };
  for (const run of [...runs].reverse()) {
    // Under a caller's key, runsForThisRequest kept only the runs started with it.
    const post = 'callerKey' in origin ? await earlierRunPost(temporal, run, 'createCard') : await earlierDerivedPost(temporal, run, 'createCard', everyDerivedKey(origin.purpose, origin.workflowId));
    if (!post) continue;
    const idempotencyKey = post.idempotencyKey ?? keyOfRun(run, origin);
    if (Date.now() - run.startedAt < CARD_KEY_TTL_MS) return { idempotencyKey };
    throw outcomeUnknown(
      { idempotencyKey, endpoint: 'POST /cards' },
      `an earlier run of this workflow (${run.runId}) posted it more than 24 h ago and recorded no card; the provider no longer answers that key, so a POST could create a second card`,
    );
  }
  return undefined;
}

/**
 * The earlier runs of this workflow ID that asked for this card: every one when the key is derived
 * from the ID; with a caller's key, those started with the same key (another key is another request).
 */
async function runsForThisRequest(temporal: Client, origin: CardKeyOrigin): Promise<EarlierRun[]> {
  const runs = await earlierRunsOfThisWorkflow(temporal);
  if (!('callerKey' in origin)) return runs;
  const same = await Promise.all(runs.map(async (run) => (await earlierRunInput<IssueCardInput>(temporal, run))?.idempotencyKey === origin.callerKey));
  return runs.filter((_, i) => same[i]);
}

/** The key an earlier run posted under when its POST's input cannot be read: the caller's; derived, SHA-256 once it recorded the marker or ran versioned, FNV before (shared/ids.ts). */
function keyOfRun(run: EarlierRun, origin: CardKeyOrigin): string {
  if ('callerKey' in origin) return origin.callerKey;
  const [sha256, legacy] = everyDerivedKey(origin.purpose, origin.workflowId);
  return run.sha256Keys ? sha256 : legacy;
}

function unreadableCard(idempotencyKey: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.InvalidResponse,
    message: `the answer to POST /cards could not be read: asking again under key ${idempotencyKey}, which the provider answers with the same card`,
    details: [{ idempotencyKey, endpoint: 'POST /cards', mayHaveTakenEffect: true }],
  });
}

/**
 * The card an earlier run of this workflow ID created (its initialAmount moved). A read that fails
 * is never the read's own failure, which would say nothing moved: a 404 is read lag on a card we were
 * told of (retried, within the POST's window), anything the provider refuses for good is OutcomeUnknown
 * naming the card, and the flow opens its item (docs/idempotency.md, "Open items").
 */
async function readEarlierCard(provider: ProviderClient, cardId: string, idempotencyKey: string): Promise<CardView> {
  try {
    return toCardView(await provider.getCard(cardId));
  } catch (err) {
    if (!isProviderError(err) || err.retryable) throw err;
    throw ApplicationFailure.create({
      type: FailureType.OutcomeUnknown,
      message: `an earlier run of this workflow created card ${cardId}, and reading it failed (${err.type}): its initialAmount moved; the card is followed as an open item`,
      nonRetryable: !isProviderError(err, 'NotFound'),
      details: [{ cardId, idempotencyKey, cause: err.type, mayHaveTakenEffect: true }],
    });
  }
}
