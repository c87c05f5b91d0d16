/**
 * Step 5 of `npm run cluster-deploy`: a bad build (builds/v3.ts) ramped, its flows stuck, rolled
 * back, the flows pinned to it moved to v2 (movePinnedFlows), and none lost.
 */
import { workflowQueues } from '../../src/shared/task-queues';
import type { Client } from '@temporalio/client';
import { describeDeployment, movePinnedFlows } from '../../src/temporal/deployments';
import { rollOut } from '../../src/temporal/rollout';
import { pause, until } from './cluster';
import { V3_FAILURE } from './builds/constants';
import { pids, placements, say, startBuild, times, type Rollout } from './deploy-context';
import type { Phase, Tracked } from './deploy-flows';
import { first, last, type Placement } from './deploy-history';
import { describeState, watchDrainage } from './deploy-rollout';
import { stopBuild } from './deploy-v2-checks';

const RAMP_PERCENT = 40;
/** The ramp's hold: long enough for the flows it takes to land on v3, fail their tasks three times, and be seen stuck. */
const SOAK_MS = 40_000;

export async function rollOutBadV3(r: Rollout): Promise<void> {
  say(`step 5: build v3 (tools/cluster/builds/v3.ts: fundCard throws after its first workflow task, withdrawFromCard before its first command) as 2 worker processes`);
  const v3 = await startBuild(r, 'v3', 2);
  // Nobody watches: `deploy rollout`'s gate (src/temporal/rollout.ts) finds the failing flows and rolls v3 back.
  const client = r.cluster.client.temporal.client;
  const rollout = rollOut(r.target, client, { buildId: 'v3', steps: [RAMP_PERCENT], soakMs: SOAK_MS, failingAttempts: 3, waitForWorkersMs: 120_000, taskQueues: workflowQueues(r.cluster.config.temporal.taskQueue, r.cluster.config.nexus.callers.map((c) => c.name)) }, (line) => say(`deploy rollout: ${line}`));
  await until('v3 ramping', async () => (await describeDeployment(r.target)).ramping?.buildId === 'v3', 120_000);
  say(`v3 workers (pids ${pids(v3)}) polling; rollOut ramped v3 to ${RAMP_PERCENT} %: ${describeState(await describeDeployment(r.target))}`);
  const P: Phase = 'v3 ramping';
  const card = (i: number) => r.flows.cards[i % 16];
  const started = await Promise.all([...times(20, (i) => r.flows.standalone(P, 'fundCard', card(i))), ...times(20, (i) => r.flows.standalone(P, 'withdrawFromCard', card(i + 4)))]);
  const landed = await landedOnV3(r, started);
  const pinnedToV3 = [...landed].filter(([, p]) => p.builds.includes('v3')).map(([t]) => t.workflowId);
  say(`${landed.size} of ${started.length} flows started during the ramp landed on v3 and fail there ("${V3_FAILURE} …"): ${pinnedToV3.length} pinned to it (a workflow task completed on v3 first), ${landed.size - pinnedToV3.length} not (no task ever completed there)`);
  if (!r.checks.that(landed.size > 0, `flows landed on v3 during its ${RAMP_PERCENT} % ramp`)) return;
  await showStuck(r, [...landed.keys()]);

  const done = await rollout;
  const drainage = watchDrainage(r.target, 'v3', 180_000);
  const after = await describeDeployment(r.target);
  r.checks.that(done.outcome === 'rolled-back' && done.rollback.from === 'v3' && after.current === 'v2' && !after.ramping, `rollOut's gate failed at ${RAMP_PERCENT} % and rolled v3 back by itself (${done.outcome === 'rolled-back' ? `${done.failing.length} flows failing their workflow tasks` : 'it promoted instead'}); ${describeState(after)}`);
  // What the rollout moved, and any it listed too early (visibility lags the workflow tasks by a moment).
  const moved = new Set([...(done.outcome === 'rolled-back' ? done.moved : []), ...(await moveFromV3(r, pinnedToV3.filter((id) => done.outcome !== 'rolled-back' || !done.moved.includes(id))))]);
  say(`movePinnedFlows v3 → v2 moved ${moved.size} flows (its visibility query: TemporalWorkerDeploymentVersion = '${r.target.deploymentName}:v3' AND ExecutionStatus = 'Running' AND TemporalWorkflowVersioningBehavior = 'Pinned')`);

  await Promise.all(started.map((t) => t.row));
  await checkNoneLost(r, started, landed, moved);
  const drained = await drainage;
  r.checks.that(drained.drained && drained.seen.some((s) => s.status === 'DRAINING'), `v3 drained, no flow left pinned to it: describeDeployment reported it ${drained.seen.map((s) => `${s.status} (+${(s.atMs / 1000).toFixed(1)} s)`).join(' then ')} after the rollback`);
  await stopBuild(r, 'v3');
  await touchEveryCard(r);
}

/** Waits until each flow has completed or failed a workflow task; resolves those a v3 worker failed, with their placement. */
async function landedOnV3(r: Rollout, started: Tracked[]): Promise<Map<Tracked, Placement>> {
  let placed = new Map<Tracked, Placement>();
  await until('each flow started during the v3 ramp completed or failed a workflow task', async () => {
    placed = await placements(r, started);
    return started.every((t) => t.done || placed.get(t)!.failedOn.length > 0);
  }, 180_000);
  return new Map([...placed].filter(([, p]) => p.failedOn.includes('v3')));
}

/** Stuck: still running a while later, its workflow task attempted again and again. */
async function showStuck(r: Rollout, stuck: Tracked[]): Promise<void> {
  await pause(10_000);
  const client = r.cluster.client.temporal.client;
  const described = await Promise.all(stuck.map((t) => client.workflow.getHandle(t.workflowId).describe()));
  const running = described.filter((d) => d.status.name === 'RUNNING');
  const attempts = described.map((d) => d.raw.pendingWorkflowTask?.attempt ?? 0);
  r.checks.that(running.length === stuck.length, `10 s later all ${stuck.length} are still running, stuck: workflow task attempts ${Math.min(...attempts)} to ${Math.max(...attempts)}`);
}

/** movePinnedFlows asked until the flows pinned to v3 are all moved (visibility lags the workflow tasks by a moment). */
async function moveFromV3(r: Rollout, pinnedToV3: string[]): Promise<Set<string>> {
  const moved = new Set<string>();
  const client = r.cluster.client.temporal.client;
  // Card workflows that continued as new onto v3 while it ramped are pinned there too, and listed a moment after.
  await until(`movePinnedFlows finds the ${pinnedToV3.length} flows pinned to v3, and then none more`, async () => {
    const now = await movePinnedFlows(r.target, 'v3', 'v2', (query) => running(client, query));
    for (const id of now) moved.add(id);
    return now.length === 0 && pinnedToV3.every((id) => moved.has(id));
  }, 60_000);
  return moved;
}

async function* running(client: Client, query: string): AsyncIterable<{ workflowId: string; runId: string }> {
  for await (const w of client.workflow.list({ query })) yield { workflowId: w.workflowId, runId: w.runId };
}

async function checkNoneLost(r: Rollout, started: Tracked[], landed: Map<Tracked, Placement>, moved: Set<string>): Promise<void> {
  const rows = await Promise.all(started.map((t) => t.row));
  const now = await placements(r, started);
  r.checks.that(rows.every((row) => row.ok), `no flow lost: all ${started.length} flows started during the v3 ramp completed (${rows.filter((row) => row.ok).length} as asked)`);
  const pinned = started.filter((t) => landed.get(t)?.builds.includes('v3'));
  r.checks.that(pinned.every((t) => first(now.get(t)!) === 'v3' && last(now.get(t)!) === 'v2' && moved.has(t.workflowId)), `the ${pinned.length} flows pinned to v3 were moved by movePinnedFlows and completed on v2 (first workflow task v3, last v2)`);
  const unpinned = started.filter((t) => landed.has(t) && !landed.get(t)!.builds.includes('v3'));
  r.checks.that(unpinned.every((t) => now.get(t)!.builds.length > 0 && now.get(t)!.builds.every((b) => b === 'v2') && !moved.has(t.workflowId)), `the ${unpinned.length} flows that failed on v3 before any task completed there were not pinned to it (movePinnedFlows did not list them) and, the ramp stopped, completed on v2 by themselves`);
  const others = started.filter((t) => !landed.has(t));
  r.checks.that(others.every((t) => now.get(t)!.builds.every((b) => b === 'v2')), `the other ${others.length} ran on v2 only`);
}

/** After v3 is gone, each card workflow answers an update on v2 (some continued as new onto v3 while it ramped: the rollback moved them back). */
async function touchEveryCard(r: Rollout): Promise<void> {
  const P: Phase = 'v3 rolled back';
  say(`step 6: v3 stopped; a fund update to each of the ${r.flows.cards.length} card workflows`);
  const updates = await Promise.all(r.flows.cards.map((c) => r.flows.moneyUpdate(P, 'fund', c)));
  await Promise.all(updates.map((t) => t.row));
  const placed = await placements(r, updates);
  r.checks.that(updates.every((t) => placed.get(t)!.builds.length > 0 && placed.get(t)!.builds.every((b) => b === 'v2')), `each of the ${updates.length} updates was accepted and completed by v2`);
}
