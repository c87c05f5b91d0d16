/**
 * Search attributes that let an operator find a card's flows in the Temporal UI.
 * Registered when our dev server starts; on a cluster, register them once with
 * `temporal operator search-attribute create` (docs/configuration.md, "Pointing at an existing Temporal cluster").
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  CardId: 'Keyword',
  FlowKind: 'Keyword',
  ProviderStatus: 'Keyword',
  MoneyMovedHour: 'Keyword',
} as const;

export const CARD_ID = defineSearchAttributeKey('CardId', SearchAttributeType.KEYWORD);
export const FLOW_KIND = defineSearchAttributeKey('FlowKind', SearchAttributeType.KEYWORD);
export const PROVIDER_STATUS = defineSearchAttributeKey('ProviderStatus', SearchAttributeType.KEYWORD);
/**
 * A sendPayout's ProviderStatus while it waits for an operator's approval (a Nexus caller's payout
 * above its payoutApprovalAbove): nothing was sent to the provider yet. `starter payouts-awaiting`
 * lists them; one that was rejected or not approved in time ends with PAYOUT_NOT_APPROVED.
 */
export const AWAITING_APPROVAL = 'AWAITING_APPROVAL';
export const PAYOUT_NOT_APPROVED = 'NOT_APPROVED';
/**
 * The UTC hour (`2026-11-23T22`) a card workflow last settled a money update in: reconcile-money
 * lists the card workflows whose hour falls in its look-back (a Keyword, as every attribute here,
 * so it registers like the others; the hours of a look-back are few).
 */
export const MONEY_MOVED_HOUR = defineSearchAttributeKey('MoneyMovedHour', SearchAttributeType.KEYWORD);

export function hourOf(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 13);
}

/** Every UTC hour from `fromMs` to `toMs`, both included. */
export function hoursBetween(fromMs: number, toMs: number): string[] {
  const hours: string[] = [];
  for (let t = Math.floor(fromMs / 3_600_000) * 3_600_000; t <= toMs; t += 3_600_000) hours.push(hourOf(t));
  return hours;
}
