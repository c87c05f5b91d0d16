/**
 * A restart of a money flow's workflow ID must move nothing its earlier run moved, even when a
 * deploy changed how keys are derived (FNV before, SHA-256 since: shared/ids.ts). A run whose key
 * is derived from its workflow ID therefore asks, before its first POST, whether an earlier run of
 * that ID exists (visibility); only then does it ask the provider under every key an earlier
 * version could have derived, and continues under the one the provider knows. A caller's own key
 * needs none of this: the caller repeats it.
 */
import type { Client } from '@temporalio/client';
import type { ProviderClient } from '../provider/client';
import type { OperationAnswer } from '../provider/answers';
import { everyDerivedKey, legacyIdempotencyKey } from '../shared/ids';
import { earlierRunsOfThisWorkflow } from './earlier-runs';
import { readOperation } from './idempotent-post';

/** How a derived key was made: its purpose and the workflow ID it was derived from. */
export interface KeyOrigin {
  purpose: string;
  workflowId: string;
}

export interface EarlierOperation {
  idempotencyKey: string;
  /** The provider's record under that key; undefined when it shows none (yet: reads may lag behind writes). */
  operation?: OperationAnswer;
}

/**
 * The key an earlier run of this workflow ID used when it is not ours, and the provider's record
 * under it (GET /operations/{key} for each candidate). Asked on every attempt, so an attempt lost
 * after it found one cannot leave the next to post under a new key. An earlier run from before
 * SHA-256 keys (its TemporalChangeVersion lacks the marker) may have posted under its FNV key
 * although the provider shows nothing under it yet (read-after-write lag): its key is kept anyway,
 * never replaced by ours, and the POST under it (idempotent) answers the original or moves once.
 */
export async function operationOfEarlierRun(
  temporal: Client,
  provider: ProviderClient,
  req: { idempotencyKey: string; keyOrigin?: KeyOrigin },
): Promise<EarlierOperation | undefined> {
  if (!req.keyOrigin) return undefined;
  const earlierRuns = await earlierRunsOfThisWorkflow(temporal);
  if (earlierRuns.length === 0) return undefined;
  for (const key of everyDerivedKey(req.keyOrigin.purpose, req.keyOrigin.workflowId)) {
    if (key === req.idempotencyKey) continue;
    const operation = await readOperation(provider, key);
    if (operation) return { idempotencyKey: key, operation };
  }
  const legacyKey = legacyIdempotencyKey(req.keyOrigin.purpose, req.keyOrigin.workflowId);
  const beforeSha256 = earlierRuns.some((run) => !run.sha256Keys);
  return beforeSha256 && legacyKey !== req.idempotencyKey ? { idempotencyKey: legacyKey } : undefined;
}
