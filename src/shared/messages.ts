/**
 * Signals, updates and queries: defined once here and imported by workflows, the bridge
 * and the starter client, so that no caller imports workflow code.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PayoutApprovalState, WithPayoutCapability } from './card-capability';
import type {
  CardFreshness,
  CardLifecycleState,
  CardMovement,
  CardView,
  ContactInput,
  EntityState,
  EsimWatchState,
  MoneyMovementInput,
  MoneyMovementResult,
  OnboardingProgress,
  ProviderEvent,
  RevealRequest,
  SealedPin,
  SealedReveal,
  WatchPlan,
} from './types';
import type { AttemptFacts, AttemptSettlement, ClosedItem, OpenItem, OpenItemSettlement } from './open-items';
import type { WithCapability } from './card-capability';

/** The bridge delivers every verified webhook with this signal (signal-with-start). */
export const providerEventSignal = defineSignal<[ProviderEvent]>('providerEvent');
/**
 * A flow asks an entity workflow to tell it about the entity's state (now and on every change);
 * with `watch`, the entity also polls the provider on that schedule until the status is final.
 */
export const subscribeSignal = defineSignal<[{ workflowId: string; watch?: WatchPlan }]>('subscribe');
/** Entity workflow → subscriber: the entity's latest state. */
export const entityStateSignal = defineSignal<[EntityState]>('entityState');
/**
 * Asks a pinned long-lived workflow to look whether its deployment has a new target build (release 3,
 * docs/versioning.md): the server tells a run so only in a workflow task and never wakes one for it, so
 * a promotion sends this to the runs pinned to other builds (temporal/roll-over.ts). It carries nothing
 * and authorises nothing: a run moves only when the server says its target changed.
 */
export const rollOverSignal = defineSignal('rollOver');
/**
 * Legacy: a flow started before entity workflows polled by themselves (release 1) told the entity
 * what its own poll saw. No flow of release 4 sends it; the entity still takes it from one that a
 * promotion held on an earlier build.
 */
export const entityObservedSignal = defineSignal<[{ status: string; data: Record<string, unknown> }]>('entityObserved');

export const entityStateQuery = defineQuery<EntityState>('entityState');
/** The bridge, before it lets a late (stale-timestamp) redelivery through: was this eventId applied, and where does the entity stand? */
export const entityEventQuery = defineQuery<{ applied: boolean; state: EntityState }, [string]>('entityEvent');
/** `esim/<esimNo>`: the latest usage read and the alerts received. */
export const esimWatchQuery = defineQuery<EsimWatchState>('esimWatch');
/** `esim/<esimNo>`: reads the usage again unless the last read is under a minute old (the provider syncs no faster). */
export const refreshEsimUsageUpdate = defineUpdate<EsimWatchState, []>('refreshEsimUsage');
export const cardStateQuery = defineQuery<CardLifecycleState>('cardState');
/** `card/<cardId>`: its state with a balance read within `maxAgeMs` and after its last movement; reads the card (GET /cards/{cardId}, its rate queue) only when the view held is older. */
export const refreshCardBalanceUpdate = defineUpdate<CardLifecycleState, [CardFreshness]>('refreshCardBalance');
/** The money updates a card workflow remembers (its last 500), each with when it settled: reconcile-money checks them one by one. */
export const cardMovementsQuery = defineQuery<CardMovement[]>('cardMovements');
/** A standalone fundCard/withdrawFromCard on the card completed: the card workflow's view of the balance is stale (read on demand). */
export const cardMoneyMovedSignal = defineSignal<[{ workflowId: string }]>('cardMoneyMoved');
/** Reconciliation read the card from the provider at `readAt`: the card workflow takes it unless its own read is newer. */
export const cardReadSignal = defineSignal<[{ card: CardView; readAt: number }]>('cardRead');
/** onboardCardholder: the cardholder id and, for the hosted flow, its page, as soon as they are known. */
export const onboardingQuery = defineQuery<OnboardingProgress>('onboarding');

// A payout held for an operator's decision (a Nexus caller's above its payoutApprovalAbove): signed by an approver's key (shared/card-capability.ts).
/** `send-payout/<key>`: where its approval stands (answered while the flow runs). */
export const payoutApprovalQuery = defineQuery<PayoutApprovalState>('payoutApproval');
/** An operator approves the payout (`starter payout-approve`): answered once the worker checked the signature; the payout is then sent. */
export const approvePayoutUpdate = defineUpdate<PayoutApprovalState, [WithPayoutCapability]>('approvePayout');
/** An operator rejects it (`starter payout-reject`): the flow ends PayoutNotApproved, nothing sent. */
export const rejectPayoutUpdate = defineUpdate<PayoutApprovalState, [WithPayoutCapability]>('rejectPayout');

// Card actions carry a capability bound to the card, the action, the arguments and an expiry (shared/card-capability.ts).
export const freezeCardUpdate = defineUpdate<CardView, [WithCapability]>('freezeCard');
export const unfreezeCardUpdate = defineUpdate<CardView, [WithCapability]>('unfreezeCard');
/** The PIN sealed by the caller to the workers' PIN key, bound to this card (shared/card-secrets.ts). */
export const setPinUpdate = defineUpdate<CardView, [WithCapability<{ pin: SealedPin }>]>('setPin');
export const updateContactUpdate = defineUpdate<CardView, [WithCapability<ContactInput>]>('updateContact');
export const deleteCardUpdate = defineUpdate<CardView, [WithCapability]>('deleteCard');
export const fundCardUpdate = defineUpdate<MoneyMovementResult, [Omit<MoneyMovementInput, 'cardId'>]>('fundCard');
export const withdrawFromCardUpdate = defineUpdate<MoneyMovementResult, [Omit<MoneyMovementInput, 'cardId'>]>('withdrawFromCard');
/** The card's number, CVV and expiry, sealed to the one-time public key the request carries. */
export const revealSensitiveUpdate = defineUpdate<SealedReveal, [WithCapability<RevealRequest>]>('revealSensitive');
/** An open item (shared/open-items.ts): what it is and what the provider last said; `closed` once it has its record. */
export const openItemQuery = defineQuery<OpenItem & { itemId: string; closed?: ClosedItem }>('openItem');
/** An operator's settlement of an open item (`starter settle REF`): answered with the item's record. */
export const closeOpenItemUpdate = defineUpdate<ClosedItem, [OpenItemSettlement]>('settleOpenItem');
/** The activity that heard the provider's final word on an attempt (or on the item it became): it closes with that word. */
export const attemptSettledSignal = defineSignal<[AttemptSettlement]>('attemptSettled');
/** What the call learned of itself from the provider's answer (issueCard: the card it created), so its item can ask about it. */
export const attemptLearnedSignal = defineSignal<[AttemptFacts]>('attemptLearned');
/** Its flow or reconciliation opens the pending attempt as an item: from now on it asks the provider and pages. */
export const attemptOpenedSignal = defineSignal<[OpenItem]>('attemptOpened');
