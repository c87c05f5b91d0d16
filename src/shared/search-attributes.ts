/**
 * Search attributes that let an operator find a card's flows in the Temporal UI.
 * Registered when our dev server starts; on a cluster, register them once with
 * `temporal operator search-attribute create` (README).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  CardId: 'Keyword',
  FlowKind: 'Keyword',
  ProviderStatus: 'Keyword',
} as const;

export const CARD_ID = defineSearchAttributeKey('CardId', SearchAttributeType.KEYWORD);
export const FLOW_KIND = defineSearchAttributeKey('FlowKind', SearchAttributeType.KEYWORD);
export const PROVIDER_STATUS = defineSearchAttributeKey('ProviderStatus', SearchAttributeType.KEYWORD);
