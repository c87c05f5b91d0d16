/**
 * What the provider says of an entity a flow waits for, by its GET endpoint: the fallback when
 * no webhook says it in time. One reader per kind, so the entity workflow's poll (and the
 * legacy poll of flows started before it, lib/legacy-flow-polling.ts) call the same activities.
 */
import type { EntityKind } from '../../shared/ids';
import { FailureType } from '../../shared/failures';
import { failWith, providerCalls } from './provider';

/** The kinds a flow waits on until a final status (an eSIM's own entity is watched, not awaited). */
export type AwaitedKind = Extract<EntityKind, 'card' | 'kyc' | 'esimOrder' | 'payout'>;

export interface Observation {
  status: string;
  /** The provider's whole record, as GET answers it. */
  data: Record<string, unknown>;
}

/** A final status and where the waiting flow learned it. */
export type Outcome = Observation & { source: 'webhook' | 'poll' };

const READERS: Record<AwaitedKind, (id: string) => Promise<Observation>> = {
  card: async (cardId) => {
    const card = await providerCalls('general').getCard({ cardId });
    return observed(card.status, card);
  },
  kyc: async (id) => {
    const holder = await providerCalls('general').getCardholder({ id });
    if (!holder) failWith(FailureType.NotFound, `the provider knows no cardholder ${id}`, [{ cardholderId: id }]);
    return observed(holder.kycStatus, holder);
  },
  esimOrder: async (orderNo) => {
    const order = await providerCalls('general').getEsimOrder({ orderNo });
    return observed(order.status, order);
  },
  payout: async (merOrderNo) => {
    const payout = await providerCalls('general').getPayout({ merOrderNo });
    return observed(payout.status, payout);
  },
};

export function isAwaitedKind(kind: EntityKind): kind is AwaitedKind {
  return kind in READERS;
}

export function readEntity(kind: AwaitedKind, entityId: string): Promise<Observation> {
  return READERS[kind](entityId);
}

function observed(status: string, record: object): Observation {
  return { status, data: { ...record } };
}
