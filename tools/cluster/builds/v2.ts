/**
 * Build v2 of `npm run cluster-deploy`: the workflows of src/workflows with two changes, bundled
 * from this module (builds/bundle.ts) as a real release bundles src/workflows.
 *
 * - fundCard and withdrawFromCard (PINNED) wait on a timer before anything v1 did, WITHOUT a
 *   marker: a v1 history replayed here fails with a nondeterminism error. Pinning is what makes that
 *   safe: a flow started on v1 ends on v1's workers.
 * - cardLifecycle (PINNED, release 3) records a memo at the start of each run, also WITHOUT a marker:
 *   a card workflow started on v1 stays there until v2 is current, then continues as new onto v2
 *   (workflows/lib/entity-loop.ts), and the new run starts on v2's code. No v1 history of it ever
 *   replays here.
 *
 * Every other workflow is src/workflows' own (the star export; a name exported here wins over it).
 */
import { sleep, upsertMemo } from '@temporalio/workflow';
import { declareVersioning } from '../../../src/workflows/lib/versioning';
import type { CardLifecycleState, MoneyMovementInput, MoneyMovementResult } from '../../../src/shared/types';
import { cardLifecycle as cardLifecycleV1, type CardLifecycleInput } from '../../../src/workflows/card-lifecycle';
import { fundCard as fundCardV1 } from '../../../src/workflows/fund-card';
import { withdrawFromCard as withdrawFromCardV1 } from '../../../src/workflows/withdraw-from-card';
import { V2_MEMO, V2_PAUSE_MS } from './constants';
import { pinnedFlow } from './pinned';

// Only workflows are exported from a build's entry: the worker registers every exported function.
export * from '../../../src/workflows';

export const fundCard = pinnedFlow(async function fundCard(input: MoneyMovementInput): Promise<MoneyMovementResult> {
  await sleep(V2_PAUSE_MS);
  return fundCardV1(input);
});

export const withdrawFromCard = pinnedFlow(async function withdrawFromCard(input: MoneyMovementInput): Promise<MoneyMovementResult> {
  await sleep(V2_PAUSE_MS);
  return withdrawFromCardV1(input);
});

export async function cardLifecycle(input: CardLifecycleInput): Promise<CardLifecycleState> {
  // Synchronous, before v1's body registers its handlers: the same first activation as v1's.
  upsertMemo({ ...V2_MEMO });
  return cardLifecycleV1(input);
}

declareVersioning('PINNED', cardLifecycle);
