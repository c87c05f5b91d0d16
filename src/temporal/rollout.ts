/**
 * A rollout that needs no person (issue 41, case 1): the new build is ramped step by step, each step
 * held for a soak while a gate watches the flows that could have reached it, then promoted; when
 * the gate finds flows whose workflow tasks keep failing, the ramp is rolled back and the flows
 * pinned to the bad build are moved to the current one (deployments.ts). `deploy rollout` runs it.
 *
 * The gate is deliberately coarse: any running flow started since the ramp began, or pinned to the
 * new build, whose workflow task has been attempted `failingAttempts` times or more. Before the ramp
 * nothing new ran on the new build, so a flow failing now is the ramp's to answer for.
 */
import type { Client } from '@temporalio/client';
import { pendingTaskAttempt, runIds, type RunId } from './run-ids';
import { rollOverAfterPromotion } from './roll-over';
import { throughMarkerGate } from './marker-gate';
import { DeploymentNotFound, DeploymentRefused, describeDeployment, isMomentary, movePinnedFlows, promoteBuild, rampBuild, rollbackBuild, type DeploymentState, type DeploymentTarget, type Rollback } from './deployments';

export interface RolloutPlan {
  buildId: string;
  /** Ramp percentages in order (each above 0, below 100); promotion follows the last. */
  steps: number[];
  /** How long each step is held before the gate decides. */
  soakMs: number;
  /** A workflow task attempted this many times or more is failing. */
  failingAttempts: number;
  /** How long the new build's workers may take to poll every task queue before the first ramp is accepted. */
  waitForWorkersMs: number;
  /** The deployment's workflow task queues: the gate looks at flows there only (a shared namespace holds other services' flows). */
  taskQueues: string[];
}

export type RolloutOutcome =
  | { outcome: 'promoted'; state: DeploymentState }
  | { outcome: 'rolled-back'; atPercent: number; failing: string[]; rollback: Rollback; moved: string[] };

/** Flows the gate looks at, at most: enough to see a bad build, few enough to describe in a soak. */
const GATE_SAMPLE = 200;

export async function rollOut(target: DeploymentTarget, client: Client, plan: RolloutPlan, progress: (line: string) => void = () => undefined): Promise<RolloutOutcome> {
  // A first deploy: the workers make their build current themselves (bootstrap), or nothing is current to gate against.
  const before = await acceptedWithin(plan.waitForWorkersMs, () => describeDeployment(target));
  if (before.current === plan.buildId) {
    progress(`build ${plan.buildId} is current already`);
    return { outcome: 'promoted', state: before };
  }
  if (!before.current) {
    progress(`no build is current yet: build ${plan.buildId} becomes current with no ramp (a first deploy)`);
    return { outcome: 'promoted', state: await acceptedWithin(plan.waitForWorkersMs, () => promoteBuild(target, plan.buildId)) };
  }
  const since = new Date();
  for (const percent of plan.steps) {
    await acceptedWithin(plan.waitForWorkersMs, () => throughMarkerGate(target, client, plan.buildId, plan.taskQueues, () => rampBuild(target, plan.buildId, percent)));
    progress(`build ${plan.buildId} ramped to ${percent} %: holding ${Math.round(plan.soakMs / 1000)} s while the gate watches`);
    await sleep(plan.soakMs);
    const failing = await failingFlows(client, target, { ...plan, since });
    if (failing.length > 0) {
      const rollback = await acceptedWithin(plan.waitForWorkersMs, () => rollbackBuild(target));
      const moved = rollback.to ? await moveAllPinned(target, client, rollback.from, rollback.to, progress) : [];
      progress(`gate failed at ${percent} %: ${failing.length} flow(s) failing their workflow tasks (${failing.slice(0, 5).join(', ')}${failing.length > 5 ? ', …' : ''}); rolled back to ${rollback.to ?? 'unversioned workers'}, ${moved.length} pinned flow(s) moved`);
      return { outcome: 'rolled-back', atPercent: percent, failing, rollback, moved };
    }
  }
  const state = await acceptedWithin(plan.waitForWorkersMs, () => throughMarkerGate(target, client, plan.buildId, plan.taskQueues, () => promoteBuild(target, plan.buildId)));
  progress(`gate passed: build ${plan.buildId} is current`);
  await rollOverAfterPromotion(target, plan.buildId, progress);
  return { outcome: 'promoted', state };
}

/** Running flows on the deployment's queues started since `since`, or pinned to `buildId`, whose workflow task has been attempted `failingAttempts` times or more. */
export async function failingFlows(client: Client, target: DeploymentTarget, gate: Pick<RolloutPlan, 'buildId' | 'failingAttempts' | 'taskQueues'> & { since: Date }): Promise<string[]> {
  const queues = gate.taskQueues.map((queue) => `TaskQueue = '${queue}'`).join(' OR ');
  const queries = [
    `ExecutionStatus = 'Running' AND StartTime >= '${gate.since.toISOString()}' AND (${queues})`,
    `ExecutionStatus = 'Running' AND TemporalWorkerDeploymentVersion = '${target.deploymentName}:${gate.buildId}'`,
  ];
  const seen = new Map<string, RunId>();
  for (const query of queries) {
    for await (const run of runIds(client, query)) {
      seen.set(`${run.workflowId}/${run.runId}`, run);
      if (seen.size >= GATE_SAMPLE) break;
    }
  }
  const failing: string[] = [];
  for (const run of seen.values()) {
    // A run gone since it was listed (retention) has no task to fail; any other failure to look stops the rollout (exit 3) rather than pass a build unseen.
    const attempt = await pendingTaskAttempt(client, run).catch((err: unknown) => {
      if ((err as { code?: number }).code === 5) return 0;
      throw err;
    });
    if (attempt >= gate.failingAttempts) failing.push(run.workflowId);
  }
  return failing;
}

/** Visibility lists a flow pinned to a build a moment after its workflow task: passes until one moves none (at most ~30 s). */
async function moveAllPinned(target: DeploymentTarget, client: Client, from: string, to: string, progress: (line: string) => void): Promise<string[]> {
  const moved = new Set<string>();
  for (let pass = 0; pass < 10; pass++) {
    const now = await movePinnedFlows(target, from, to, (query) => runIds(client, query)).catch((err: unknown) => {
      // An earlier release's build cannot replay them: they stay where they are, and the rollback stands.
      if (!(err instanceof DeploymentRefused)) throw err;
      progress(err.message);
      return undefined;
    });
    if (!now) break;
    now.forEach((id) => moved.add(id));
    if (now.length === 0 && pass > 0) break;
    await sleep(3000);
  }
  return [...moved];
}

/** The move, asked again while the server refuses it for want of the build's pollers, knows no deployment yet or is momentarily busy, up to `ms`. */
async function acceptedWithin<T>(ms: number, move: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + ms;
  for (let pause = 500; ; pause = Math.min(pause * 2, 5000)) {
    try {
      return await move();
    } catch (err) {
      const waitable = err instanceof DeploymentRefused || err instanceof DeploymentNotFound || isMomentary(err);
      if (!waitable || Date.now() + pause > deadline) throw err;
      await sleep(pause);
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
