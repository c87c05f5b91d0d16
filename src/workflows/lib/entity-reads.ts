/**
 * What the provider says of an entity a flow waits for, by its GET endpoint: the fallback when
 * no webhook says it in time: one reader per kind, for the entity workflow's poll.
 */
import type { EntityKind } from '../../shared/ids';
import { FailureType } from '../../shared/failures';
import { failWith, providerCalls, type CallOptions } from './provider';

/** The kinds a flow waits on until a final status (an eSIM's own entity is watched, not awaited). */
export type AwaitedKind = Extract<EntityKind, 'card' | 'kyc' | 'esimOrder' | 'payout'>;

export interface Observation {
  status: string;
  /** The provider's whole record, as GET answers it. */
  data: Record<string, unknown>;
}

/** A final status and where the waiting flow learned it. */
export type Outcome = Observation & { source: 'webhook' | 'poll' };

type Reader = (id: string, options: CallOptions) => Promise<Observation>;

const READERS: Record<AwaitedKind, Reader> = {
  card: async (cardId, options) => {
    const card = await providerCalls('general', options).getCard({ cardId });
    return observed(card.status, card);
  },
  kyc: async (id, options) => {
    const holder = await providerCalls('general', options).getCardholder({ id });
    if (!holder) failWith(FailureType.NotFound, `the provider knows no cardholder ${id}`, [{ cardholderId: id }]);
    return observed(holder.kycStatus, holder);
  },
  esimOrder: async (orderNo, options) => {
    const order = await providerCalls('general', options).getEsimOrder({ orderNo });
    return observed(order.status, order);
  },
  payout: async (merOrderNo, options) => {
    const payout = await providerCalls('general', options).getPayout({ merOrderNo });
    return observed(payout.status, payout);
  },
};

export function isAwaitedKind(kind: EntityKind): kind is AwaitedKind {
  return kind in READERS;
}

/** `options`: the read's retry policy (the entity's poll retries few times, then tries again at its next interval). */
export function readEntity(kind: AwaitedKind, entityId: string, options: CallOptions = {}): Promise<Observation> {
  return READERS[kind](entityId, options);
}

function observed(status: string, record: object): Observation {
  return { status, data: { ...record } };
}
