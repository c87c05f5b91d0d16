/**
 * A flow's search attributes (FlowKind, CardId), which the typed client already sets when it
 * starts the flow: upserting them again would cost every flow one more command and one more
 * visibility write. A flow started otherwise (another client, an operator) upserts them itself.
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';

/** docs/versioning.md: search attributes the starter set are not upserted again. */
export const SEARCH_ATTRIBUTES_AT_START_PATCH = 'search-attributes-at-start';

export function searchableBy(pairs: SearchAttributeUpdatePair[]): void {
  const atStart = workflowInfo().typedSearchAttributes;
  // The start event decides, so replay decides the same; the marker keeps flows that were
  // started with these attributes before this change (and upserted them anyway) replaying.
  if (pairs.every(({ key, value }) => atStart.get(key) === value) && patched(SEARCH_ATTRIBUTES_AT_START_PATCH)) return;
  upsertSearchAttributes(pairs);
}
