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
import { everyDerivedKey } from '../shared/ids';
import { earlierRunsOfThisWorkflow } from './earlier-runs';
import { readOperation } from './idempotent-post';

/** How a derived key was made: its purpose and the workflow ID it was derived from. */
export interface KeyOrigin {
  purpose: string;
  workflowId: string;
}

export interface EarlierOperation {
  idempotencyKey: string;
  operation: OperationAnswer;
}

/**
 * The operation an earlier run of this workflow ID left under another key than ours, if any
 * (GET /operations/{key} for each candidate). Asked on every attempt, so an attempt lost after
 * it found one cannot leave the next to post under a new key.
 */
export async function operationOfEarlierRun(
  temporal: Client,
  provider: ProviderClient,
  req: { idempotencyKey: string; keyOrigin?: KeyOrigin },
): Promise<EarlierOperation | undefined> {
  if (!req.keyOrigin) return undefined;
  if ((await earlierRunsOfThisWorkflow(temporal)).length === 0) return undefined;
  for (const key of everyDerivedKey(req.keyOrigin.purpose, req.keyOrigin.workflowId)) {
    if (key === req.idempotencyKey) continue;
    const operation = await readOperation(provider, key);
    if (operation) return { idempotencyKey: key, operation };
  }
  return undefined;
}
