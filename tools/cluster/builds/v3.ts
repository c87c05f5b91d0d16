/**
 * Build v3 of `npm run cluster-deploy`: v2 (builds/v2.ts) with a bad change to the standalone money
 * flows, in the two shapes the server tells apart (what deploy.ts checks after the rollback):
 *
 * - fundCard completes its first workflow task as v2's does (the timer) and throws on the next.
 *   The server pins a flow to a build when a workflow task completes on it, so this flow is pinned
 *   to v3: it stays stuck after the rollback until movePinnedFlows moves it to v2, which replays the
 *   timer v3 recorded (v2's own) and moves the money.
 * - withdrawFromCard throws before its first command: no workflow task ever completes on v3, so
 *   the flow is not pinned to it (no TemporalWorkerDeploymentVersion either); it is only routed
 *   there while v3 ramps, and once the ramp stops its next attempt goes to the current build.
 *
 * A plain Error (not an ApplicationFailure) fails the workflow task, not the workflow: Temporal
 * retries it, which is what a bad deploy looks like.
 */
import { sleep } from '@temporalio/workflow';
import type { MoneyMovementInput, MoneyMovementResult } from '../../../src/shared/types';
import { V2_PAUSE_MS, V3_FAILURE } from './constants';
import { pinnedFlow } from './pinned';

export * from './v2';

export const fundCard = pinnedFlow(async function fundCard(_input: MoneyMovementInput): Promise<MoneyMovementResult> {
  await sleep(V2_PAUSE_MS);
  throw new Error(`${V3_FAILURE} (after the first workflow task)`);
});

export const withdrawFromCard = pinnedFlow(async function withdrawFromCard(_input: MoneyMovementInput): Promise<MoneyMovementResult> {
  throw new Error(`${V3_FAILURE} (before the first command)`);
});
