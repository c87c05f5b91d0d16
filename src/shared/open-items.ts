/**
 * Open items (docs/idempotency.md, "Open items"): money that may have moved and is not yet known.
 * Every call that may have moved money and has not had the provider's final word is one open item,
 * with one record (the `openItem` workflow under `open-item/<owner>`), one owner (the flow run or
 * card update it belongs to) and one way to close: the provider's final answer, asked on a cadence
 * with no look-back window, or an operator's settlement. A reconciliation report is a view of them,
 * never their home. Pure: workflows, activities and the CLI share it.
 */
import { everyDerivedKey } from './ids';
import type { FieldErrors } from './failures';
import { phaseOf, type Phase } from './statuses';
import { KEY_PURPOSE, type ClaimResource, type MoneyClaim, type ProviderSide } from './reconcile-checks';

export const OPEN_ITEM_WORKFLOW_TYPE = 'openItem';
/** The memo key under which an item lists every reference it can be found by (`starter settle REF`, `open`). */
export const OPEN_ITEM_MEMO = 'openItem';
const OPEN_ITEM_PREFIX = 'open-item/';
/** The ProviderStatus a flow sets as it opens its item: its item, not the flow, is what pages and is settled. */
export const OPEN_ITEM_STATUS = 'OPEN_ITEM';

/** What an item belongs to: a flow's run, or a card workflow's money update. */
export interface OpenItemOwner {
  workflowId: string;
  /** The run that may have moved money (a new run of the same workflow ID is another item). */
  runId?: string;
  /** A card workflow's money update, or its delete (`workflowId` is the card workflow's). */
  updateId?: string;
  /**
   * `delete`: the update is the card's delete, which no money movement record lists; its owner's own
   * record is the card workflow's view (temporal/attempts.ts ownerState). Absent: a money update or a flow.
   */
  action?: 'delete';
}

/** The flow kind of a card delete (its balance back to the wallet) as an attempt and an item name it. */
export const DELETE_CARD_FLOW_KIND = 'deleteCard';

/** Where the provider keeps its side, when the spec lets us ask. */
export interface OpenItemLookup {
  resource: ClaimResource;
  /** The idempotency key, merOrderNo, orderNo or cardId the provider knows it by. */
  ref: string;
  /** Other keys a version of the flow could have used: asked too. */
  alsoUnder?: string[];
  /**
   * The provider's silence proves nothing: the spec gives the endpoint no idempotency key
   * (POST /esim/recharge), so "no record under our key" is not "not moved". Only a record, or an
   * operator's word, closes the item.
   */
  silenceProvesNothing?: boolean;
}

export interface OpenItem {
  owner: OpenItemOwner;
  /** The flow's kind (its workflow type), or `fundCard` / `withdrawFromCard` for a card update. */
  flowKind: string;
  /** How to ask the provider; absent: the spec gives no lookup (a KYC submission, an issueCard that recorded no card), so only an operator closes it. */
  lookup?: OpenItemLookup;
  idempotencyKey?: string;
  cardId?: string;
  amount?: number;
  /** What ended the flow or update without an answer: a failure type, or how it closed (Terminated, Canceled, …). */
  reason: string;
  /** What the provider last said (a status, "no record", or "not asked"). */
  lastSaid: string;
  /** Epoch ms. */
  openedAt: number;
  /** How often it is asked: from `firstAskMs`, doubling to `maxAskIntervalMs` (defaults: 5 min, 6 h). */
  cadence?: { firstAskMs?: number; maxAskIntervalMs?: number };
}

export const OPEN_ITEM_VERDICTS = ['moved', 'not-moved'] as const;
export type OpenItemVerdict = (typeof OPEN_ITEM_VERDICTS)[number];

/** An operator's settlement of an item (the `settleOpenItem` update). */
export interface OpenItemSettlement {
  /** The operator's finding, required where the provider cannot be asked; checked against it where it can. */
  found?: OpenItemVerdict;
  /** Why, who, the ticket: kept with the record. */
  note?: string;
}

/** The record an item closes with (the workflow's result): what moved, and who said so. */
export interface ClosedItem {
  itemId: string;
  item: OpenItem;
  verdict: OpenItemVerdict;
  by: 'provider' | 'operator';
  /** What the provider said when it was last asked. */
  providerSaid: string;
  /** The key that answered, when it was one of the lookup's `alsoUnder` (a key an earlier version derived). */
  answeredUnder?: string;
  closedAt: string;
  note?: string;
}

/** The workflow ID of an owner's item: one per run or card update. */
export function openItemId(owner: OpenItemOwner): string {
  return `${OPEN_ITEM_PREFIX}${owner.workflowId}/${owner.updateId !== undefined ? `update/${owner.updateId}` : (owner.runId ?? 'run')}`;
}

export function isOpenItemId(id: string): boolean {
  return id.startsWith(OPEN_ITEM_PREFIX);
}

/** The item's cadence held to the workers' floor (OPEN_ITEM_MIN_ASK_MS): a caller's fast polling never becomes a fast ask of the provider. */
export function withCadenceFloor<T extends Pick<OpenItem, 'cadence'>>(item: T, floorMs: number): T {
  if (!item.cadence) return item;
  const first = Math.max(item.cadence.firstAskMs ?? floorMs, floorMs);
  const max = item.cadence.maxAskIntervalMs === undefined ? {} : { maxAskIntervalMs: Math.max(item.cadence.maxAskIntervalMs, first) };
  return { ...item, cadence: { firstAskMs: first, ...max } };
}

/** The memo an item carries (whether started as one or opened from its attempt): what `starter open` and `settle REF` read. */
export function openItemMemo(itemId: string, item: OpenItem): Record<string, unknown> {
  return { [OPEN_ITEM_MEMO]: { refs: openItemRefs(itemId, item), flowKind: item.flowKind, openedAt: item.openedAt, reason: item.reason } };
}

/** Every reference an operator may hold of the item: its own ID, the workflow ID, run, update ID, keys, the provider's ref. */
export function openItemRefs(itemId: string, item: OpenItem): string[] {
  const refs = [itemId, item.owner.workflowId, item.owner.runId, item.owner.updateId, item.idempotencyKey, item.lookup?.ref, ...(item.lookup?.alsoUnder ?? [])];
  return [...new Set(refs.filter((r): r is string => typeof r === 'string' && r.length > 0))];
}

/** The spec gives POST /esim/recharge no idempotency key: a lookup under ours cannot prove it did not happen. */
export function silenceProvesNothing(flowKind: string): boolean {
  return flowKind === 'rechargeEsim';
}

/** The lookup of a reconciliation claim (a flow that closed without a word): where the provider keeps its side. */
export function lookupOfClaim(claim: Pick<MoneyClaim, 'flowKind' | 'resource' | 'ref' | 'alsoUnder'>): OpenItemLookup {
  return { resource: claim.resource, ref: claim.ref, ...(claim.alsoUnder ? { alsoUnder: claim.alsoUnder } : {}), ...(silenceProvesNothing(claim.flowKind) ? { silenceProvesNothing: true } : {}) };
}

/**
 * How to ask the provider about a flow's possible movement: its payout by merOrderNo, its eSIM
 * order by orderNo, its card by cardId (issueCard), or its operation under the key it used (the
 * caller's, the one its failure names, else every key its workflow ID or update derives).
 * Undefined: nothing the spec lets us ask.
 */
export function lookupOf(flowKind: string, known: { idempotencyKey?: string; merOrderNo?: string; orderNo?: string; cardId?: string; keyScope?: string }): OpenItemLookup | undefined {
  if (flowKind === 'sendPayout') return known.merOrderNo ? { resource: 'payout', ref: known.merOrderNo } : undefined;
  if (flowKind === 'issueCard') return known.cardId ? { resource: 'card', ref: known.cardId } : undefined;
  // A card delete returns the card's balance to the wallet: its card says whether it was deleted (statuses.ts cardDeletion).
  if (flowKind === DELETE_CARD_FLOW_KIND) return known.cardId ? { resource: 'cardDeletion', ref: known.cardId } : undefined;
  if (known.orderNo && (flowKind === 'purchaseEsim' || flowKind === 'rechargeEsim')) return { resource: 'esimOrder', ref: known.orderNo };
  const purpose = KEY_PURPOSE[flowKind];
  if (!purpose) return undefined;
  const keys = known.idempotencyKey ? [known.idempotencyKey] : known.keyScope ? everyDerivedKey(purpose, known.keyScope) : [];
  if (keys.length === 0) return undefined;
  const [ref, ...alsoUnder] = keys;
  return lookupOfClaim({ flowKind, resource: 'operation', ref, ...(alsoUnder.length > 0 ? { alsoUnder } : {}) });
}

/**
 * What the provider's answer settles: moved when it says the movement succeeded; not moved when it
 * failed or was cancelled, or when it has no record under a key it honours (an operation's key, a
 * payout's merOrderNo); undefined while it still works on it, or when its silence proves nothing.
 */
export function providerVerdict(lookup: OpenItemLookup, side: ProviderSide): OpenItemVerdict | undefined {
  // No record under a key the provider honours: the call never reached it. An order or a card we were
  // told of exists, so its absence is read lag; under a key the spec does not honour it proves nothing.
  if (!side.known) return lookup.silenceProvesNothing || lookup.resource === 'card' || lookup.resource === 'cardDeletion' || lookup.resource === 'esimOrder' ? undefined : 'not-moved';
  const phase: Phase = phaseOf(lookup.resource, side.status);
  if (phase === 'succeeded') return 'moved';
  if (phase === 'failed' || phase === 'cancelled') return 'not-moved';
  return undefined;
}

/** What the provider said, in a word for the record and the ProviderStatus search attribute. */
export function saidOf(side: ProviderSide): string {
  return side.known ? String(side.status ?? 'KNOWN').slice(0, 64) : 'NO_RECORD';
}

export const MAX_SETTLE_NOTE_LENGTH = 500;

export function openItemSettlementErrors(input: Partial<OpenItemSettlement> | undefined): FieldErrors {
  const errors: FieldErrors = {};
  if (input?.found !== undefined && !(OPEN_ITEM_VERDICTS as readonly unknown[]).includes(input.found)) errors.found = `must be one of ${OPEN_ITEM_VERDICTS.join(', ')}`;
  if (input?.note !== undefined && (typeof input.note !== 'string' || input.note.length > MAX_SETTLE_NOTE_LENGTH)) errors.note = `must be text of at most ${MAX_SETTLE_NOTE_LENGTH} characters`;
  return errors;
}

/**
 * The attempt (issue 51): a call that may move money is recorded before its first POST as a
 * `moneyAttempt` workflow under its item's ID (open-item/<owner>). The activity that hears the
 * provider's final word settles it (nothing to keep); a flow that ends unsure opens it as its item;
 * an owner that stops with it still pending (terminated, cancelled, timed out, a card workflow
 * stopped mid-update) makes it an open item at once, without waiting for a reconciliation.
 */
export const MONEY_ATTEMPT_WORKFLOW_TYPE = 'moneyAttempt';
/** How often a pending attempt looks whether its owner still runs (Temporal's describe; no provider call). */
export const ATTEMPT_WATCH_MS = 30_000;
export const ATTEMPT_MAX_WATCH_MS = 5 * 60_000;

/** What the flow says of its attempt: the owner, the kind, and (tests, impatient callers) how soon to watch. */
export interface AttemptOf {
  owner: OpenItemOwner;
  flowKind: string;
  watchMs?: number;
  /** The item's cadence, should it become one (open-item-of.ts cadenceOf). */
  cadence?: OpenItem['cadence'];
}

/** The attempt's input: the item it becomes, should its owner stop without the provider's word. */
export interface MoneyAttempt {
  item: OpenItem;
  watchMs: number;
}

/** What a money call knows of itself (before its POST, or learned from its answer): what its item is asked by. */
export interface AttemptFacts {
  idempotencyKey?: string;
  cardId?: string;
  amount?: number;
  merOrderNo?: string;
  orderNo?: string;
}

/** The item an attempt becomes, described by what is known of its call. */
export function attemptItem(base: Pick<OpenItem, 'owner' | 'flowKind' | 'openedAt' | 'cadence'>, facts: AttemptFacts): OpenItem {
  const lookup = lookupOf(base.flowKind, { ...facts, keyScope: base.owner.workflowId });
  return {
    owner: base.owner,
    flowKind: base.flowKind,
    ...(lookup ? { lookup } : {}),
    ...(facts.idempotencyKey ? { idempotencyKey: facts.idempotencyKey } : {}),
    ...(facts.cardId ? { cardId: facts.cardId } : {}),
    ...(facts.amount === undefined ? {} : { amount: facts.amount }),
    reason: 'Pending',
    lastSaid: 'NOT_ASKED',
    openedAt: base.openedAt,
    ...(base.cadence ? { cadence: base.cadence } : {}),
  };
}

/** The provider's final word on an attempt, as the activity that heard it saw it. */
export interface AttemptSettlement {
  verdict: OpenItemVerdict;
  providerSaid: string;
}

/** A pending attempt's end: settled by the provider's word its flow heard, or recorded by its owner's own result. */
export interface AttemptRecord {
  itemId: string;
  /** What the provider knows it by (its key, and the payout's merOrderNo or the operation's key it is looked up under): the books find it by them. */
  idempotencyKey?: string;
  lookupRef?: string;
  settledBy: 'provider' | 'flow';
  verdict?: OpenItemVerdict;
  providerSaid?: string;
  ownerStatus?: string;
}

/**
 * Money the provider moved that no record of ours accounts for (reconcile-money's `moved-unaccounted`,
 * issue 51) is an open item of its own: its owner is the claim's (flow run or card update) with the
 * provider's reference as its update ID (`moved-unaccounted/<resource>/<ref>`), so every run that finds
 * it finds the same item. It has no lookup: the provider already said moved; what is missing is our
 * record of why, so only an operator's settlement closes it (`settle ITEM --found moved --note ...`).
 */
export const UNACCOUNTED_REASON = 'moved-unaccounted';

export function unaccountedItemOf(
  claim: Pick<MoneyClaim, 'workflowId' | 'runId' | 'updateId' | 'flowKind' | 'resource' | 'ref' | 'cardId' | 'amount' | 'ourStatus'>,
  providerSaid: string,
  now: number,
): OpenItem {
  const ref = `${UNACCOUNTED_REASON}/${claim.resource}/${claim.ref}`;
  return {
    owner: { workflowId: claim.workflowId, ...(claim.runId !== undefined ? { runId: claim.runId } : {}), updateId: claim.updateId !== undefined ? `${claim.updateId}/${ref}` : ref },
    flowKind: claim.flowKind,
    ...(claim.resource === 'operation' ? { idempotencyKey: claim.ref } : {}),
    ...(claim.cardId ? { cardId: claim.cardId } : {}),
    ...(claim.amount === undefined ? {} : { amount: claim.amount }),
    reason: `${UNACCOUNTED_REASON}: we say ${claim.ourStatus}, the provider's ${claim.resource} ${claim.ref} says ${providerSaid}`.slice(0, 300),
    lastSaid: providerSaid,
    openedAt: now,
  };
}

/** What became of a `moved-unaccounted` claim's item: its own item still runs, its item is open, or settled with its verdict. */
export interface UnaccountedState {
  itemId: string;
  state: 'held-by-its-item' | 'open' | 'settled';
  verdict?: OpenItemVerdict;
}
