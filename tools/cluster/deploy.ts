/**
 * `npm run cluster-deploy` (opt-in, not part of `npm test`): a rollout through Worker Deployments
 * (docs/versioning.md) on the cluster of the smoke run (cluster.ts: the Temporal server built from
 * its Go module on PostgreSQL, the provider sandbox, a bridge), with flows in flight throughout.
 *
 * 1. Build v1 (the real code) runs as 2 worker processes and makes itself current (bootstrap).
 *    200 mixed flows start on it while the sandbox holds every write PROCESSING.
 * 2. Build v2 (builds/v2.ts: unmarked changes to the pinned money flows and to the card workflow)
 *    starts as 2 more processes, is ramped to 10 % and promoted; flows start during the ramp and
 *    after. Pinned v1 flows end on v1, new ones run on v2; card workflows (pinned, release 3) finish
 *    what they hold on v1, money in flight included, and continue as new onto v2 when the promotion
 *    asks (src/temporal/roll-over.ts), their updates still answered; v1 drains (DRAINING, then
 *    DRAINED) and its processes stop.
 * 3. Build v3 (builds/v3.ts: a bug) is ramped to 40 %; the flows that land on it are stuck; the
 *    rollback stops the ramp, movePinnedFlows moves the ones pinned to v3 to v2, every flow completes,
 *    v3 drains and stops.
 * 4. Every flow ended as asked, each card's balance at the provider is what our flows moved, and
 *    the ledger has no violation. A table says where each flow ran.
 *
 * Everything it starts it stops, also on failure. Exit 0 only when every check held.
 */
import { workflowQueues } from '../../src/shared/task-queues';
import type { Connection } from '@temporalio/client';
import { entityWorkflowId } from '../../src/shared/ids';
import type { WaitTimings } from '../../src/shared/types';
import { describeDeployment } from '../../src/temporal/deployments';
import { rollOut } from '../../src/temporal/rollout';
import { cleanUpFlowRun, type FlowRun } from '../flows';
import { outlastingOutages, runToExit, startCluster, stoppers, until } from './cluster';
import { bundleBuild } from './builds/bundle';
import { DeployFlows, type Phase } from './deploy-flows';
import { Checks, elapsed, pids, say, startBuild, times, type Rollout } from './deploy-context';
import { deploymentTarget, describeState, watchDrainage } from './deploy-rollout';
import { cardsOnV2, checkV2Rollout, stopBuild } from './deploy-v2-checks';
import { rollOutBadV3 } from './deploy-v3';
import { report } from './deploy-report-run';

const NAMESPACE = 'card-issuing-deploy';
const DEPLOYMENT = 'card-issuing';
/** How long the sandbox keeps each write PROCESSING while v2 is started, ramped and promoted (its maximum). */
const HOLD_MS = 60_000;
/** A short provider window (as the soak's quick check): 300 and more money calls in minutes, not an hour. */
const WINDOW_MS = 10_000;
const TIMINGS: WaitTimings = { webhookWaitMs: 15_000, pollInitialIntervalMs: 2000, pollMaxIntervalMs: 15_000, deadlineMs: 1_800_000 };
const SANDBOX = { cardProvisioningMs: 1500, kycReviewMs: 2500, esimIssueMs: 1000, payoutProcessingMs: 1500, webhook: { retryBaseMs: 500 }, rateLimit: { windowMs: WINDOW_MS } };
/**
 * The server checks a version's drainage after a grace period, then at an interval: minutes by
 * default, seconds here. A workflow task that failed many times is retried after up to 10 minutes;
 * here 5 s, so a stuck flow moved to another build runs there within seconds.
 */
const DYNAMIC_CONFIG = {
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '5s',
  'matching.wv.VersionDrainageStatusRefreshInterval': '3s',
  'history.workflowTaskRetryMaxInterval': '5s',
};

async function main(): Promise<number> {
  const r = await startV1();
  await v1Flows(r);
  await rollOutV2(r);
  await rollOutBadV3(r);
  return report(r);
}

/** Step 1: the cluster with build v1's two worker processes, v1 current through their bootstrap. */
async function startV1(): Promise<Rollout> {
  say('step 1: the cluster, and build v1 (the real code, the cluster\'s bundle) as 2 worker processes with TEMPORAL_WORKER_BUILD_ID=v1');
  const cluster = await startCluster({
    name: 'cluster-deploy',
    namespace: NAMESPACE,
    workers: 2,
    workerPrefix: 'v1-worker',
    workerEnv: { TEMPORAL_WORKER_BUILD_ID: 'v1' },
    bridges: 1,
    sandbox: SANDBOX,
    env: { PROVIDER_RATE_WINDOW_MS: String(WINDOW_MS), TEMPORAL_DEPLOYMENT_NAME: DEPLOYMENT },
    dynamicConfig: DYNAMIC_CONFIG,
    say,
  });
  const bundles = { v2: (await bundleBuild('v2', cluster.dir)).path, v3: (await bundleBuild('v3', cluster.dir)).path };
  say(`variant bundles built with bundleWorkflowCode from tools/cluster/builds/v2.ts and v3.ts (src/workflows re-exported, what changes overridden): ${bundles.v2}, ${bundles.v3}`);
  const target = deploymentTarget(cluster.client.temporal.client.connection as Connection, NAMESPACE, DEPLOYMENT);
  await until('build v1 current', async () => (await describeDeployment(target)).current === 'v1', 60_000);
  say(`deployment ${DEPLOYMENT}: ${describeState(await describeDeployment(target))} (the v1 workers made their build current: TEMPORAL_DEPLOYMENT_BOOTSTRAP=if-none, the deployment had none)`);
  const run: FlowRun = { client: cluster.client, control: cluster.control, timings: TIMINGS, tag: 'Deploy', log: (l) => l.startsWith('FAIL') && say(l), awaitResult: outlastingOutages, made: {} };
  stoppers.push(async () => cleanUpFlowRun(run));
  return { cluster, flows: new DeployFlows(run, TIMINGS), target, bundles, workers: { v1: cluster.workers }, checks: new Checks() };
}

/** Step 2: 200 mixed flows on v1, most of them waiting on the provider's held writes. */
async function v1Flows(r: Rollout): Promise<void> {
  const { flows } = r;
  const P: Phase = 'v1 current';
  say('step 2: 200 mixed flows on v1');
  await Promise.all((await Promise.all(times(20, () => flows.issue(P)))).map((t) => t.row));
  if (flows.cards.length !== 20) throw new Error(`only ${flows.cards.length} of 20 cards were issued on v1`);
  await r.cluster.control.configure({ operationProcessingMs: HOLD_MS });
  say(`20 cards issued; the sandbox now holds each write PROCESSING for ${HOLD_MS / 1000} s (operationProcessingMs) until v2 is promoted`);
  const card = (i: number) => flows.cards[i % 16];
  await Promise.all([
    ...times(60, (i) => flows.standalone(P, 'fundCard', card(i))),
    ...times(40, (i) => flows.standalone(P, 'withdrawFromCard', card(i + 5))),
    ...times(10, (i) => flows.moneyUpdate(P, 'fund', card(i + 3))),
    ...times(10, (i) => flows.moneyUpdate(P, 'withdraw', card(i + 9))),
    ...flows.cards.slice(16).map((c) => flows.freezeUnfreeze(P, c)),
    ...times(20, () => flows.flows(P, 'eSIM purchase', true)),
    ...times(20, () => flows.flows(P, 'payout', false)),
    ...times(8, () => flows.kyc(P)),
    ...times(2, () => flows.flows(P, 'KYC onboarding (rejected)', false)),
    ...times(2, () => flows.flows(P, 'failing card (firstName FAIL)', true)),
    ...times(4, () => flows.issue(P)),
  ]);
  say(`${flows.tracked.length} flows started on v1 (standalone fundCard ×60 and withdrawFromCard ×40, card updates through the typed client ×24, issueCard ×26, eSIM ×20, payouts ×20, KYC ×10); ${flows.inFlight()} in flight`);
}

/** Step 3: v2 started beside v1, ramped to 10 %, promoted; v1 drains and stops. */
async function rollOutV2(r: Rollout): Promise<void> {
  say('step 3: build v2 (tools/cluster/builds/v2.ts) as 2 more worker processes: TEMPORAL_WORKER_BUILD_ID=v2, TEMPORAL_DEPLOYMENT_BOOTSTRAP=never, WORKFLOW_BUNDLE_PATH=its bundle');
  const v2 = await startBuild(r, 'v2', 2);
  say(`v2 workers (pids ${pids(v2)}) polling; ${r.flows.inFlight()} flows in flight; ${describeState(await describeDeployment(r.target))}`);

  // The everyday upgrade: nobody ramps or promotes; `deploy rollout` does (src/temporal/rollout.ts), as the chart's hook Job.
  const client = r.cluster.client.temporal.client;
  const rollout = rollOut(r.target, client, { buildId: 'v2', steps: [10], soakMs: 20_000, failingAttempts: 3, waitForWorkersMs: 120_000, taskQueues: workflowQueues(r.cluster.config.temporal.taskQueue, r.cluster.config.nexus.callers.map((c) => c.name)) }, (line) => say(`deploy rollout: ${line}`));
  await until('v2 ramping', async () => (await describeDeployment(r.target)).ramping?.buildId === 'v2', 120_000);
  say(`rollOut ramped v2 to 10 %: ${describeState(await describeDeployment(r.target))}`);
  const P: Phase = 'v2 ramping';
  const card = (i: number) => r.flows.cards[i % 16];
  await Promise.all([
    ...times(8, (i) => r.flows.standalone(P, 'fundCard', card(i))),
    ...times(6, (i) => r.flows.standalone(P, 'withdrawFromCard', card(i + 8))),
    ...times(3, () => r.flows.issue(P)),
    ...times(3, () => r.flows.flows(P, 'eSIM purchase', true)),
  ]);
  say(`20 flows started during the ramp (10 % of new flows go to v2, by workflow ID)`);

  const pinnedInFlight = r.flows.inFlight('v1 current', true);
  const promoted = await rollout;
  // Card workflows with a money update still held PROCESSING: each finishes it on v1, then continues as new onto v2.
  const cardsWithMoneyInFlight = new Set(r.flows.tracked.filter((t) => t.repeat && !t.done).map((t) => t.workflowId));
  const drainage = watchDrainage(r.target, 'v1', 600_000);
  r.checks.that(promoted.outcome === 'promoted' && promoted.state.current === 'v2', `rollOut's gate passed and it promoted v2 by itself: ${promoted.outcome === 'promoted' ? describeState(promoted.state) : `rolled back (${promoted.failing.length} failing)`}`);
  say(`${pinnedInFlight} pinned flows started on v1 before the ramp still in flight`);
  await r.cluster.control.configure({ operationProcessingMs: 0 });
  say('the sandbox answers new writes at once again (the held ones keep their hold)');

  say(`${cardsWithMoneyInFlight.size} card workflows had a money update in flight at the promotion`);
  await v2CurrentFlows(r);
  await checkV2Rollout(r, await drainage, pinnedInFlight, cardsWithMoneyInFlight);
  await stopBuild(r, 'v1');
}

/** Flows started once v2 is current, and an update to every card workflow (its next task is v2's). */
async function v2CurrentFlows(r: Rollout): Promise<void> {
  const P: Phase = 'v2 current';
  const card = (i: number) => r.flows.cards[i % 16];
  const payouts = r.flows.tracked.filter((t) => t.phase === 'v1 current' && t.flow === 'payout').slice(0, 5);
  await Promise.all([
    ...times(10, (i) => r.flows.standalone(P, 'fundCard', card(i + 2))),
    ...times(8, (i) => r.flows.standalone(P, 'withdrawFromCard', card(i + 10))),
    ...times(4, () => r.flows.issue(P)),
    ...times(4, () => r.flows.flows(P, 'eSIM purchase', true)),
    ...times(4, () => r.flows.flows(P, 'payout', false)),
    ...times(2, () => r.flows.kyc(P)),
    ...payouts.map((p) => r.flows.trackPayout(P, p.workflowId)),
  ]);
  say(`${r.flows.tracked.filter((t) => t.phase === P).length} flows started after the promotion; ${r.flows.inFlight()} flows in flight`);
  // Cards issued before the promotion: each gets a fund update once its workflow runs on v2 (a held movement finishes on v1 first).
  await Promise.all(r.flows.tracked.filter((t) => t.flow === 'issueCard' && t.phase !== P).map((t) => t.row));
  await cardsOnV2(r);
  say(`every card workflow issued before the promotion now runs on v2 (continued as new onto it when asked: the promotion's rollOver batch)`);
  const freezes = new Map(r.flows.tracked.filter((t) => t.flow === 'freeze+unfreeze').map((t) => [t.workflowId, t.row]));
  const earlier = r.flows.cards.filter((c) => c.phase !== P);
  await Promise.all(earlier.map(async (c) => (await freezes.get(entityWorkflowId('card', c.cardId)), r.flows.moneyUpdate(P, 'fund', c))));
  say(`a fund update sent to each of the ${earlier.length} card workflows started before the promotion`);
}

say(`started at ${new Date(Date.now() - elapsed()).toISOString()}`);
runToExit(main, say);
