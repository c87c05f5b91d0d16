/**
 * What reconciliation compares, as pure functions (imported by the workflows and the activities,
 * unit-tested without I/O): what a money flow said it did, and whether the provider agrees;
 * whether a card workflow's view matches the provider's card.
 */
import type { Difference, WindowedRead } from './reconciliation';
import { deriveIdempotencyKey } from './ids';
import { phaseOf, type Phase } from './statuses';
import type { CardView } from './types';

/** How a closed flow ended: its result, its failure, or another close (timed out, terminated, cancelled). */
/** A closed flow's outcome; one that ended without a word (timed out, terminated) brings the key its caller gave, if any. */
/**
 * What a money flow (or a card workflow's money update) says: its result; its failure (with the
 * caller's key, for a failure whose details name none); how it closed without a word; or that it is
 * still running, with the caller's key and the amount it asked for.
 */
export type FlowOutcome =
  | { result: unknown }
  | { failure: { type: string; details: unknown[] }; callerKey?: string }
  | { closed: string; callerKey?: string }
  | { running: true; callerKey?: string; amount?: number };

export type ClaimResource = 'operation' | 'payout' | 'esimOrder';

/** What one money flow says it did, and where the provider keeps its side. */
export interface MoneyClaim {
  workflowId: string;
  flowKind: string;
  resource: ClaimResource;
  /** The idempotency key, merOrderNo or orderNo the provider knows it by. */
  ref: string;
  ourPhase: Phase;
  /** Our word for it: the result's status, the failure's type, or how the flow closed. */
  ourStatus: string;
  amount?: number;
  cardId?: string;
  /** A card workflow's money update: its update ID (`workflowId` is the card workflow's). */
  updateId?: string;
}

/** What the provider says of it; `known: false`: it has no record. */
export interface ProviderSide extends WindowedRead {
  known: boolean;
  status?: string;
  amount?: number;
}

const MOVEMENT_PURPOSE: Record<string, string> = { fundCard: 'fund', withdrawFromCard: 'wdr' };

/** Whether a flow kind moves card money under an idempotency key (its caller's, or one derived from its workflow ID). */
export function isCardMovement(flowKind: string): boolean {
  return flowKind in MOVEMENT_PURPOSE;
}
/** An eSIM flow failed this way after the provider charged and refunded in full: its operation may say COMPLETED, and no money is missing. */
const SETTLED_ESIM_FAILURES = ['EsimRefunded'];

/** The claim of a money flow (closed, or running: then only its key and amount), or undefined when it never reached the provider (e.g. ValidationFailed) or says nothing checkable. */
export function moneyClaimOf(workflowId: string, flowKind: string, outcome: FlowOutcome): MoneyClaim | undefined {
  const base = { workflowId, flowKind };
  if ('result' in outcome) {
    const r = (outcome.result ?? {}) as Record<string, unknown>;
    if (flowKind in MOVEMENT_PURPOSE && typeof r.idempotencyKey === 'string') {
      return { ...base, resource: 'operation', ref: r.idempotencyKey, ourPhase: 'succeeded', ourStatus: String(r.status ?? 'COMPLETED'), amount: num(r.amount), cardId: str(r.cardId) };
    }
    if ((flowKind === 'sendPayout' || flowKind === 'trackPayout') && typeof r.merOrderNo === 'string') {
      const status = String(r.status);
      return { ...base, resource: 'payout', ref: r.merOrderNo, ourPhase: phaseOf('payout', status), ourStatus: status, amount: num(r.arriveAmount) };
    }
    if ((flowKind === 'purchaseEsim' || flowKind === 'rechargeEsim') && typeof r.orderNo === 'string') {
      const status = String(r.status);
      return { ...base, resource: 'esimOrder', ref: r.orderNo, ourPhase: phaseOf('esimOrder', status), ourStatus: status };
    }
    return undefined;
  }
  if ('failure' in outcome) {
    const key = keyIn(outcome.failure.details) ?? outcome.callerKey;
    const checkable = flowKind in MOVEMENT_PURPOSE || ((flowKind === 'purchaseEsim' || flowKind === 'rechargeEsim') && !SETTLED_ESIM_FAILURES.includes(outcome.failure.type));
    if (!key || !checkable) return undefined;
    return { ...base, resource: 'operation', ref: key, ourPhase: 'failed', ourStatus: outcome.failure.type };
  }
  // Running, or timed out, terminated or cancelled without details: the caller's key, or the one a keyless movement derives from its workflow ID.
  const purpose = MOVEMENT_PURPOSE[flowKind];
  if (!purpose) return undefined;
  const ref = outcome.callerKey ?? deriveIdempotencyKey(purpose, workflowId);
  if ('running' in outcome) return { ...base, resource: 'operation', ref, ourPhase: 'pending', ourStatus: 'RUNNING', amount: outcome.amount };
  return { ...base, resource: 'operation', ref, ourPhase: 'failed', ourStatus: outcome.closed };
}

/** The difference between a claim and the provider's side, if any. A provider still PROCESSING is no difference yet. */
export function compareClaim(claim: MoneyClaim, provider: ProviderSide): Difference | undefined {
  const theirs: Phase | 'unknown' = provider.known ? phaseOf(claim.resource, provider.status) : 'unknown';
  const ours = claim.ourPhase;
  const difference = (kind: Difference['kind']): Difference => ({
    kind,
    ids: idsOf(claim),
    ours: definedOnly({ status: claim.ourStatus, amount: claim.amount }),
    ...(provider.known ? { provider: definedOnly({ status: provider.status, amount: provider.amount }) } : {}),
    workflowId: claim.workflowId,
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
export function compareCard(ours: { cardId: string; workflowId: string; status?: string; availableBalance?: number }, provider: { known: boolean; card?: CardView }): Difference[] {
  const ids = { cardId: ours.cardId };
  const base = { ids, workflowId: ours.workflowId };
  if (!provider.known || !provider.card) return [{ kind: 'card-unknown-at-provider', ...base, ours: definedOnly({ status: ours.status, availableBalance: ours.availableBalance }) }];
  const out: Difference[] = [];
  if (ours.status !== provider.card.status) out.push({ kind: 'card-status-differs', ...base, ours: ours.status, provider: provider.card.status });
  if (ours.availableBalance !== provider.card.availableBalance) {
    out.push({ kind: 'card-balance-differs', ...base, ours: ours.availableBalance, provider: provider.card.availableBalance });
  }
  return out;
}

function idsOf(claim: MoneyClaim): Record<string, string> {
  if (claim.resource === 'payout') return { merOrderNo: claim.ref };
  if (claim.resource === 'esimOrder') return { orderNo: claim.ref };
  return definedOnly({ idempotencyKey: claim.ref, cardId: claim.cardId, updateId: claim.updateId }) as Record<string, string>;
}

function keyIn(details: unknown[]): string | undefined {
  for (const d of details) {
    const key = (d as { idempotencyKey?: unknown } | null)?.idempotencyKey;
    if (typeof key === 'string' && key) return key;
  }
  return undefined;
}

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

function definedOnly<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}
