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
import { earlierDerivedPost, earlierRunsOfThisWorkflow } from './earlier-runs';
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
 * under it. Asked on every attempt, so an attempt lost after it found one cannot leave the next to
 * post under a new key. The provider is asked under every key any build could have derived, ours
 * included, before anything is chosen: a record under ours means we continue under ours; a record
 * under another means that one. Only when no key shows a record does an earlier run's key matter,
 * and only a run that actually scheduled the POST (`postActivity`) counts: the key that POST was
 * scheduled with (its history, decoded), or, unreadable, the one its markers and Worker Deployment
 * version say it derived. One from before SHA-256 keys may have posted under its FNV key although
 * the provider shows nothing yet (read-after-write lag), so its key is kept, never replaced by ours;
 * one of release 2 (no marker) posted under SHA-256, ours. A run the lookup does not recognise
 * (terminated before its first task) is a reason to ask, never to pick a key.
 */
export async function operationOfEarlierRun(
  temporal: Client,
  provider: ProviderClient,
  req: { idempotencyKey: string; keyOrigin?: KeyOrigin },
  postActivity: string,
): Promise<EarlierOperation | undefined> {
  if (!req.keyOrigin) return undefined;
  const earlierRuns = await earlierRunsOfThisWorkflow(temporal);
  if (earlierRuns.length === 0) return undefined;
  const derived = everyDerivedKey(req.keyOrigin.purpose, req.keyOrigin.workflowId);
  const keys = [req.idempotencyKey, ...derived.filter((k) => k !== req.idempotencyKey)];
  for (const key of keys) {
    const operation = await readOperation(provider, key);
    if (operation) return key === req.idempotencyKey ? undefined : { idempotencyKey: key, operation };
  }
  const legacyKey = legacyIdempotencyKey(req.keyOrigin.purpose, req.keyOrigin.workflowId);
  for (const run of earlierRuns) {
    const post = await earlierDerivedPost(temporal, run, postActivity, derived);
    if (!post) continue;
    const key = post.idempotencyKey ?? (run.sha256Keys ? req.idempotencyKey : legacyKey);
    if (key !== req.idempotencyKey) return { idempotencyKey: key };
  }
  return undefined;
}
