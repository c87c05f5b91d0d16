/**
 * Which workflow an event belongs to: the entity the event names, never a visibility query
 * (visibility is eventually consistent; a workflow ID is not).
 */
import type { EntityKind } from '../shared/ids';
import type { ProviderEvent } from '../shared/types';
import type { EntityRef } from '../temporal/entity-signals';

/** eventType → the entity kind and the data field that names it. */
const ROUTES: Record<string, [EntityKind, string]> = {
  CARD_CREATED: ['card', 'cardId'],
  CARD_TRANSACTION: ['card', 'cardId'],
  CARDHOLDER_KYC_STATUS: ['kyc', 'id'],
  ESIM_ISSUED: ['esimOrder', 'orderNo'],
  ESIM_REFUNDED: ['esimOrder', 'orderNo'],
  ESIM_RECHARGED: ['esimOrder', 'orderNo'],
  ESIM_USAGE_ALERT: ['esim', 'esimNo'],
  ESIM_EXPIRING: ['esim', 'esimNo'],
  ESIM_EXPIRED: ['esim', 'esimNo'],
};

export function entityFor(event: ProviderEvent): EntityRef {
  const route = ROUTES[event.eventType] ?? (event.eventType.startsWith('PAYOUT_') ? (['payout', 'merOrderNo'] as const) : undefined);
  const entityId = route && event.data[route[1]];
  if (route && typeof entityId === 'string' && entityId !== '') return { kind: route[0], entityId };
  // Unknown types (and known ones without their id) are kept, one workflow per type, for an operator to see.
  return { kind: 'unrouted', entityId: event.eventType.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'UNKNOWN' };
}
