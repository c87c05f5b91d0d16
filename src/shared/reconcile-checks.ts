/**
 * What reconciliation compares, as pure functions (imported by the workflows and the activities,
 * unit-tested without I/O): what a money flow said it did, and whether the provider agrees;
 * whether a card workflow's view matches the provider's card.
 */
import type { Difference, WindowedRead } from './reconciliation';
import { everyDerivedKey } from './ids';
import { phaseOf, type Phase } from './statuses';
import type { CardView } from './types';

/**
 * What a flow was asked and recorded, where its outcome does not say: the caller's key, the amount
 * and merOrderNo of its start input, and the card it recorded (issueCard's CardId).
 */
export interface FlowAsked {
  callerKey?: string;
  amount?: number;
  merOrderNo?: string;
  cardId?: string;
}

/**
 * What a money flow (or a card workflow's money update) says: its result; its failure; how it
 * closed without a word (timed out, terminated, cancelled); or that it is still running. All but
 * the result bring what the flow was asked, for the keys and ids its outcome does not name.
 */
export type FlowOutcome =
  | { result: unknown }
  | ({ failure: { type: string; details: unknown[] } } & FlowAsked)
  | ({ closed: string } & FlowAsked)
  | ({ running: true } & FlowAsked);

/** `cardDeletion`: a card read for what its DELETE did (statuses.ts), where `card` reads it for its issuance. */
export type ClaimResource = 'operation' | 'payout' | 'esimOrder' | 'card' | 'cardDeletion';

/** What one money flow says it did, and where the provider keeps its side. */
export interface MoneyClaim {
  workflowId: string;
  flowKind: string;
  resource: ClaimResource;
  /** The idempotency key, merOrderNo, orderNo or cardId the provider knows it by. */
  ref: string;
  /** Other keys an earlier version of the flow could have derived (FNV before SHA-256): asked when `ref` shows nothing. */
  alsoUnder?: string[];
  ourPhase: Phase;
  /** Our word for it: the result's status, the failure's type, or how the flow closed. */
  ourStatus: string;
  amount?: number;
  cardId?: string;
  /** A card workflow's money update: its update ID (`workflowId` is the card workflow's). */
  updateId?: string;
  /** The run that made the claim (a flow's; not a card update's). */
  runId?: string;
}

/** What the provider says of it; `known: false`: it has no record. */
export interface ProviderSide extends WindowedRead {
  known: boolean;
  /** The key that answered, when it is one of the claim's `alsoUnder`. */
  ref?: string;
  status?: string;
  amount?: number;
}

/** The purpose each flow kind derives its key with when the caller gives none (shared/ids.ts). */
export const KEY_PURPOSE: Readonly<Record<string, string>> = { fundCard: 'fund', withdrawFromCard: 'wdr', purchaseEsim: 'esim', rechargeEsim: 'esimrc' };
const MOVEMENT_KINDS = ['fundCard', 'withdrawFromCard'];
const ESIM_KINDS = ['purchaseEsim', 'rechargeEsim'];

/** Whether a flow kind moves card money under an idempotency key (its caller's, or one derived from its workflow ID). */
export function isCardMovement(flowKind: string): boolean {
  return MOVEMENT_KINDS.includes(flowKind);
}

/**
 * Failures that say this request moved nothing: refused before any call (ValidationFailed), or its
 * key answers another request (IdempotencyConflict: what is under the key is not ours to compare).
 */
const NOTHING_MOVED = ['ValidationFailed', 'IdempotencyConflict'];
/** An eSIM flow failed this way after the provider charged and refunded in full: its operation may say COMPLETED, and no money is missing. */
const SETTLED_ESIM_FAILURES = ['EsimRefunded'];

/**
 * The claim of a money flow, or undefined when it says nothing checkable (it never reached the
 * provider, or the provider offers no lookup of it: an issueCard that recorded no card). Every way
 * a flow ends is covered: a result; a failure (OutcomeUnknown and the rest); a close without a word
 * (terminated, timed out, cancelled); still running (card movements only: their amount).
 * `keyScope` is what a keyless flow derived its key from (its workflow ID; a card update's update ID).
 */
export function moneyClaimOf(workflowId: string, flowKind: string, outcome: FlowOutcome, keyScope: string | undefined = workflowId): MoneyClaim | undefined {
  if ('result' in outcome) return resultClaim(workflowId, flowKind, outcome.result);
  if ('failure' in outcome && (NOTHING_MOVED.includes(outcome.failure.type) || (ESIM_KINDS.includes(flowKind) && SETTLED_ESIM_FAILURES.includes(outcome.failure.type)))) return undefined;
  const base = { workflowId, flowKind };
  const running = 'running' in outcome;
  const ourStatus = 'failure' in outcome ? outcome.failure.type : 'closed' in outcome ? outcome.closed : 'RUNNING';
  const ended = { ourPhase: 'failed' as const, ourStatus };
  const details = 'failure' in outcome ? outcome.failure.details : [];
  if (flowKind === 'sendPayout') return running || !outcome.merOrderNo ? undefined : { ...base, resource: 'payout', ref: outcome.merOrderNo, ...ended };
  if (flowKind === 'issueCard') {
    // The spec looks a card up by its id only (POST /cards is not an operation): a run that recorded none is settled by hand.
    const cardId = outcome.cardId ?? fieldIn(details, 'cardId');
    return running || !cardId ? undefined : { ...base, resource: 'card', ref: cardId, ...ended };
  }
  const purpose = KEY_PURPOSE[flowKind];
  if (!purpose || (running && !isCardMovement(flowKind))) return undefined;
  const given = fieldIn(details, 'idempotencyKey') ?? outcome.callerKey;
  const keys = given ? [given] : keyScope ? everyDerivedKey(purpose, keyScope) : [];
  if (keys.length === 0) return undefined;
  const [ref, ...alsoUnder] = keys;
  const under = { resource: 'operation' as const, ref, ...(alsoUnder.length > 0 ? { alsoUnder } : {}) };
  if (running) return { ...base, ...under, ourPhase: 'pending', ourStatus, amount: outcome.amount };
  return { ...base, ...under, ...ended };
}

/** A completed flow's claim: its key or order and what it says it moved. */
function resultClaim(workflowId: string, flowKind: string, result: unknown): MoneyClaim | undefined {
  const base = { workflowId, flowKind };
  const r = (result ?? {}) as Record<string, unknown>;
  if (isCardMovement(flowKind) && typeof r.idempotencyKey === 'string') {
    return { ...base, resource: 'operation', ref: r.idempotencyKey, ourPhase: 'succeeded', ourStatus: String(r.status ?? 'COMPLETED'), amount: num(r.amount), cardId: str(r.cardId) };
  }
  if ((flowKind === 'sendPayout' || flowKind === 'trackPayout') && typeof r.merOrderNo === 'string') {
    const status = String(r.status);
    return { ...base, resource: 'payout', ref: r.merOrderNo, ourPhase: phaseOf('payout', status), ourStatus: status, amount: num(r.arriveAmount) };
  }
  if (ESIM_KINDS.includes(flowKind) && typeof r.orderNo === 'string') {
    const status = String(r.status);
    return { ...base, resource: 'esimOrder', ref: r.orderNo, ourPhase: phaseOf('esimOrder', status), ourStatus: status };
  }
  // A completed issueCard's card is reconcile-cards' to compare, with the card workflow's view.
  return undefined;
}

/** The difference between a claim and the provider's side, if any. A provider still PROCESSING is no difference yet. */
export function compareClaim(claim: MoneyClaim, provider: ProviderSide): Difference | undefined {
  const theirs: Phase | 'unknown' = provider.known ? phaseOf(claim.resource, provider.status) : 'unknown';
  const ours = claim.ourPhase;
  const difference = (kind: Difference['kind']): Difference => ({
    kind,
    ids: idsOf(claim, provider.ref),
    ours: definedOnly({ status: claim.ourStatus, amount: claim.amount }),
    ...(provider.known ? { provider: definedOnly({ status: provider.status, amount: provider.amount }) } : {}),
    workflowId: claim.workflowId,
    flowKind: claim.flowKind,
  });
  if (ours === 'succeeded' && (theirs === 'unknown' || theirs === 'failed' || theirs === 'cancelled')) return difference('done-not-at-provider');
  if ((ours === 'failed' || ours === 'cancelled') && theirs === 'succeeded') return difference('moved-unaccounted');
  // A flow still running has no outcome to compare yet, but its key at the provider must carry the amount it asked for.
  const amountsDiffer = claim.amount !== undefined && provider.amount !== undefined && claim.amount !== provider.amount;
  if (amountsDiffer && ((ours === 'succeeded' && theirs === 'succeeded') || (ours === 'pending' && provider.known))) return difference('amount-differs');
  if (ours !== 'pending' && theirs !== 'pending' && theirs !== 'unknown' && ours !== theirs) return difference('status-differs');
  return undefined;
}

/** A card workflow's view against the provider's card: each way they differ. */
export function compareCard(ours: { cardId: string; workflowId: string; status?: string; availableBalance?: number; movedSinceBalanceRead?: boolean }, provider: { known: boolean; card?: CardView }): Difference[] {
  const ids = { cardId: ours.cardId };
  const base = { ids, workflowId: ours.workflowId };
  if (!provider.known || !provider.card) return [{ kind: 'card-unknown-at-provider', ...base, ours: definedOnly({ status: ours.status, availableBalance: ours.availableBalance }) }];
  const out: Difference[] = [];
  if (ours.status !== provider.card.status) out.push({ kind: 'card-status-differs', ...base, ours: ours.status, provider: provider.card.status });
  // A view a movement of ours made stale is read on demand (card-balance.ts): its old balance is no drift.
  if (ours.availableBalance !== provider.card.availableBalance && !ours.movedSinceBalanceRead) {
    out.push({ kind: 'card-balance-differs', ...base, ours: ours.availableBalance, provider: provider.card.availableBalance });
  }
  return out;
}

function idsOf(claim: MoneyClaim, answeredUnder = claim.ref): Record<string, string> {
  if (claim.resource === 'payout') return { merOrderNo: claim.ref };
  if (claim.resource === 'esimOrder') return { orderNo: claim.ref };
  if (claim.resource === 'card' || claim.resource === 'cardDeletion') return { cardId: claim.ref };
  return definedOnly({ idempotencyKey: answeredUnder, cardId: claim.cardId, updateId: claim.updateId }) as Record<string, string>;
}

/** The first non-empty string `field` among a failure's details. */
export function fieldIn(details: readonly unknown[], field: string): string | undefined {
  for (const d of details) {
    const value = (d as Record<string, unknown> | null)?.[field];
    if (typeof value === 'string' && value) return value;
  }
  return undefined;
}

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

function definedOnly<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Where a reconcile-money run reads from (issue 51): the flows closed since the last completed run
 * STARTED (temporal/reconciliation-runs.ts lastRunStart), so a slow run, a paused schedule or a tight
 * budget leaves no gap between runs. Never less than the kind's default look-back (visibility indexes a
 * close a little late), less LOOK_BACK_OVERLAP_MS; never more than MAX_LOOK_BACK_MS (a query of bounded
 * size): a run that had to cap says so (`capped`, a warning, reconciliation_look_back_capped).
 */
export interface LookBack {
  /** Flows closed since then (epoch ms) are read. */
  sinceMs: number;
  /** `input`: told `since`; `last-run`: from the last completed run's start; `default`: no such run, the kind's default. */
  from: 'input' | 'last-run' | 'default';
  /** The start of the run it read from (epoch ms). */
  lastRunStartedAt?: number;
  /** The last run started before MAX_LOOK_BACK_MS ago: read from the cap; what closed between is not read. */
  capped?: boolean;
}

/** The furthest back a run reads when its last run started long ago (a schedule paused a week): 7 days. */
export const MAX_LOOK_BACK_MS = 7 * 24 * 3_600_000;
/** Read a little before the last run's start: a flow that closed just before it may have been indexed after it listed. */
export const LOOK_BACK_OVERLAP_MS = 10 * 60_000;

export function lookBackFrom(now: number, lastRunStartedAt: number | undefined, defaultMs: number, maxMs = MAX_LOOK_BACK_MS): LookBack {
  if (lastRunStartedAt === undefined) return { sinceMs: now - defaultMs, from: 'default' };
  const wanted = Math.min(lastRunStartedAt - LOOK_BACK_OVERLAP_MS, now - defaultMs);
  const floor = now - maxMs;
  return wanted < floor ? { sinceMs: floor, from: 'last-run', lastRunStartedAt, capped: true } : { sinceMs: wanted, from: 'last-run', lastRunStartedAt };
}
