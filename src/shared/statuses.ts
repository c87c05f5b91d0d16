/**
 * What each provider status means, one table per resource: the one home of status knowledge,
 * read by the workflows (when to stop waiting, how a flow ended), the entity inbox (which
 * status is newer), the bridge and the sandbox. Pure: imported by workflow code.
 *
 * The provider's answers are authoritative and the spec shows only part of its vocabulary
 * (CONTRACTS §8): a status missing from a table is `pending`, i.e. not final, so a flow that
 * meets one keeps waiting (and records it) until its deadline instead of failing.
 */

/** Where a status leaves the flow that waits on it. */
export type Phase = 'pending' | 'succeeded' | 'failed' | 'cancelled';

export type StatusResource = 'card' | 'cardDeletion' | 'operation' | 'kyc' | 'esimOrder' | 'esim' | 'payout';
/** Entity kinds share these names; `unrouted` events have no vocabulary. */
type AnyResource = StatusResource | 'unrouted';

interface Meaning {
  phase: Phase;
  /** Later in the resource's life = higher; an older status never overwrites a newer one. */
  rank: number;
}

const m = (phase: Phase, rank: number): Meaning => ({ phase, rank });

/** Rank of a status the table does not know: between the first and the final ones. */
const UNKNOWN_RANK = 1;

export const STATUS_TABLE: Readonly<Record<StatusResource, Readonly<Record<string, Meaning>>>> = {
  // Issuance ends when the card leaves CREATING: ENABLE, or any later state, means it was provisioned.
  card: {
    CREATING: m('pending', 0),
    ENABLE: m('succeeded', 1),
    DISABLE: m('succeeded', 1),
    FAILED: m('failed', 1),
    EXPIRED: m('succeeded', 2),
    DELETING: m('succeeded', 2),
    DELETED: m('succeeded', 3),
  },
  // The same card read as the answer to a DELETE (issue 51): the deletion moved the card's balance back to
  // the wallet once the card reads DELETING or DELETED; one still ENABLE or DISABLE was not deleted.
  // CREATING, EXPIRED and any status the spec does not show say nothing of it.
  cardDeletion: {
    ENABLE: m('failed', 1),
    DISABLE: m('failed', 1),
    DELETING: m('succeeded', 2),
    DELETED: m('succeeded', 3),
  },
  operation: { PROCESSING: m('pending', 0), COMPLETED: m('succeeded', 2), FAILED: m('failed', 2) },
  kyc: { PENDING: m('pending', 0), APPROVED: m('succeeded', 2), REJECTED: m('failed', 2) },
  // FAILED is not the end of an order: the provider refunds it (REFUNDED) in full.
  esimOrder: { PAID: m('pending', 0), ISSUING: m('pending', 1), FAILED: m('pending', 2), ISSUED: m('succeeded', 3), REFUNDED: m('failed', 3) },
  // The eSIM itself (usage and expiry events), not an order.
  esim: { ACTIVE: m('pending', 0), EXPIRING: m('pending', 1), DEPLETED: m('succeeded', 2), EXPIRED: m('succeeded', 2) },
  // CONTRACTS §8: public integration code spells success and cancellation otherwise; both are read.
  payout: {
    PENDING: m('pending', 0),
    PROCESSING: m('pending', 1),
    COMPLETED: m('succeeded', 2),
    SUCCESS: m('succeeded', 2),
    FAILED: m('failed', 2),
    CANCELLED: m('cancelled', 2),
    CANCELED: m('cancelled', 2),
  },
};

function meaning(resource: AnyResource, status: string | undefined): Meaning | undefined {
  return status === undefined || resource === 'unrouted' ? undefined : STATUS_TABLE[resource][status];
}

/** The phase of a status; unknown and missing statuses are `pending`. */
export function phaseOf(resource: AnyResource, status: string | undefined): Phase {
  return meaning(resource, status)?.phase ?? 'pending';
}

/** A status after which the resource will not change in a way its waiting flow cares about. */
export function isFinal(resource: AnyResource, status: string | undefined): boolean {
  return phaseOf(resource, status) !== 'pending';
}

/** True when the status is not in the resource's table: worth recording, never fatal. */
export function isUnknownStatus(resource: AnyResource, status: string | undefined): boolean {
  return status !== undefined && meaning(resource, status) === undefined;
}

export function statusRank(resource: AnyResource, status: string): number {
  return meaning(resource, status)?.rank ?? UNKNOWN_RANK;
}
