/**
 * What an event says of its entity's status, and the ordering rule that keeps an older status
 * from overwriting a newer one. Pure: the entity inbox applies events with it, and the bridge
 * judges a late (stale-timestamp) redelivery with the same rule before it lets it through.
 */
import { statusRank } from './statuses';
import type { EntityState, ProviderEvent } from './types';

/** An older status never overwrites a newer one: rank first, then the event's time. */
export function isNewer(current: EntityState, status: string, at: number): boolean {
  if (current.status === undefined) return true;
  const next = statusRank(current.kind, status);
  const now = statusRank(current.kind, current.status);
  if (next !== now) return next > now;
  return at >= (current.lastEventAt ?? 0) && status !== current.status;
}

/** The status an event reports, if any (transactions and usage alerts report none). */
export function statusOf(event: ProviderEvent): string | undefined {
  const status = rawStatusOf(event);
  // A status is a word: a longer value (a 3 KB string) is kept only as far as a word goes, so it fits a search attribute.
  return status === undefined ? undefined : status.slice(0, MAX_STATUS_LENGTH);
}

/** The longest provider status kept: beyond it the value is not a status word, and Temporal's search attributes are bounded. */
export const MAX_STATUS_LENGTH = 64;

function rawStatusOf(event: ProviderEvent): string | undefined {
  const data = event.data;
  if (typeof data.kycStatus === 'string') return data.kycStatus;
  if (event.eventType === 'CARD_TRANSACTION' || event.eventType === 'ESIM_USAGE_ALERT') return undefined;
  if (event.eventType === 'ESIM_EXPIRING') return 'EXPIRING';
  if (event.eventType === 'ESIM_EXPIRED') return typeof data.reason === 'string' && data.reason === 'DEPLETED' ? 'DEPLETED' : 'EXPIRED';
  if (typeof data.status === 'string') return data.status;
  if (event.eventType.startsWith('PAYOUT_')) return event.eventType.slice('PAYOUT_'.length);
  return undefined;
}
