/**
 * `deploy status | ramp PERCENT | promote | rollback | rollout | release-gate | marker-gate` (docs/versioning.md,
 * "Rollout and rollback"): the operator's moves on the Worker Deployment (TEMPORAL_DEPLOYMENT_NAME)
 * through temporal/deployments.ts, and release 2's gate (temporal/release-gate.ts: exit 1
 * `ReleaseGateClosed` while a short flow that ran unversioned is open), and the marker gate (temporal/marker-gate.ts:
 * exit 1 `MarkerGateClosed` while a long-lived type has a running run that is not pinned; a ramp or promotion of a
 * markerless build passes through it). A move the deployment's state does not allow changes nothing and exits 1
 * (`DeploymentRefused`); a deployment no versioned worker has joined yet, likewise (`DeploymentNotFound`).
 */
import type { Connection } from '@temporalio/client';
import {
  DeploymentNotFound,
  DeploymentRefused,
  describeDeployment,
  movePinnedFlows,
  promoteBuild,
  rampBuild,
  rollbackBuild,
  type DeploymentState,
  type DeploymentTarget,
} from '../temporal/deployments';
import { rollOut } from '../temporal/rollout';
import { rollOverAfterPromotion } from '../temporal/roll-over';
import { runIds } from '../temporal/run-ids';
import { workflowQueues } from '../shared/task-queues';
import { describeGate, releaseGate } from '../temporal/release-gate';
import { describeMarkerGate, markerGate, throughMarkerGate } from '../temporal/marker-gate';
import { UsageError, flag, type Flags } from './args';
import { bool, str, type Command, type CommandContext, type CommandOutcome } from './command-kit';
import { renderTable } from './output';

type DeployPlan =
  | { action: 'status' }
  | { action: 'ramp'; percent: number; buildId?: string }
  | { action: 'promote'; buildId?: string }
  | { action: 'rollback'; movePinned: boolean }
  | { action: 'rollout'; buildId?: string; steps: number[]; soakMs: number; failingAttempts: number; waitForWorkersMs: number }
  | { action: 'release-gate' }
  | { action: 'marker-gate' };

const ROLLOUT_FLAGS = ['build', 'steps', 'soak', 'failing-attempts', 'wait-for-workers'];

/** A whole number of seconds from 1 to `max`, in ms; `fallback` when the flag is absent. */
function secondsFlag(flags: Flags, name: string, fallback: number, max = 3600): number {
  const given = flag(flags, name);
  if (given === undefined) return fallback * 1000;
  if (!/^\d+$/.test(given) || Number(given) < 1 || Number(given) > max) throw new UsageError(`--${name} must be a whole number of seconds from 1 to ${max} (got "${given}")`);
  return Number(given) * 1000;
}

function stepsFlag(flags: Flags): number[] {
  const given = flag(flags, 'steps') ?? '10,50';
  const steps = given.split(',').map((s) => percentArg(s.trim()));
  if (steps.some((s, i) => i > 0 && s <= steps[i - 1])) throw new UsageError(`--steps must rise, each a percentage above 0 and below 100 (got "${given}")`);
  return steps;
}

const BUILD_ID = /^[A-Za-z0-9_.+-]{1,100}$/;

function buildFlag(flags: Flags): string | undefined {
  const buildId = flag(flags, 'build');
  if (buildId !== undefined && !BUILD_ID.test(buildId)) throw new UsageError(`--build must be a build ID: 1-100 characters of [A-Za-z0-9_.+-] (got "${buildId}")`);
  return buildId;
}

function percentArg(word: string | undefined): number {
  const percent = Number(word);
  if (word === undefined || !/^\d+(\.\d+)?$/.test(word) || percent <= 0 || percent >= 100) {
    throw new UsageError(`PERCENT must be a number above 0 and below 100, the share of new flows the ramping build takes (got "${word ?? ''}"); 100 is \`deploy promote\``);
  }
  return percent;
}

const deploy: Command<DeployPlan> = {
  usage: 'deploy status | deploy ramp PERCENT [--build ID] | deploy promote [--build ID] | deploy rollback [--move-pinned] | deploy rollout [--build ID] [--steps 10,50] [--soak SECONDS] [--failing-attempts N] [--wait-for-workers SECONDS] | deploy release-gate | deploy marker-gate',
  description: 'Show or move the Worker Deployment: status, ramp, promote, rollback, rollout, release-gate, marker-gate (docs/versioning.md).',
  example: 'deploy ramp 10 --build 2026-11-23.1',
  options: { build: str, 'move-pinned': bool, steps: str, soak: str, 'failing-attempts': str, 'wait-for-workers': str },
  positional: 'ACTION [PERCENT]',
  positionals: 2,
  parse(flags, words) {
    const [action, arg, ...rest] = (words ?? '').split(' ').filter(Boolean);
    const only = (allowed: string[]) => {
      for (const name of ['move-pinned', ...ROLLOUT_FLAGS]) if (flags[name] !== undefined && !allowed.includes(name)) throw new UsageError(`deploy ${action} takes no --${name}`);
      if (rest.length > 0 || (action !== 'ramp' && arg !== undefined)) throw new UsageError(`deploy ${action} takes ${action === 'ramp' ? 'one PERCENT' : 'no argument'} (got "${[arg, ...rest].filter(Boolean).join(' ')}")`);
    };
    switch (action) {
      case 'status':
      case 'release-gate':
      case 'marker-gate':
        only([]);
        return { action };
      case 'ramp':
        only(['build']);
        return { action, percent: percentArg(arg), buildId: buildFlag(flags) };
      case 'promote':
        only(['build']);
        return { action, buildId: buildFlag(flags) };
      case 'rollback':
        only(['move-pinned']);
        return { action, movePinned: flags['move-pinned'] === true };
      case 'rollout': {
        only(ROLLOUT_FLAGS);
        const attempts = flag(flags, 'failing-attempts') ?? '3';
        if (!/^\d+$/.test(attempts) || Number(attempts) < 2 || Number(attempts) > 100) throw new UsageError(`--failing-attempts must be a whole number from 2 to 100 (got "${attempts}")`);
        return { action, buildId: buildFlag(flags), steps: stepsFlag(flags), soakMs: secondsFlag(flags, 'soak', 60), failingAttempts: Number(attempts), waitForWorkersMs: secondsFlag(flags, 'wait-for-workers', 300) };
      }
      default:
        throw new UsageError(`ACTION must be status, ramp, promote, rollback, rollout, release-gate or marker-gate${action ? ` (got "${action}")` : ''}`);
    }
  },
  async run(plan, ctx) {
    const { client } = (await ctx.client()).temporal;
    if (plan.action === 'release-gate') {
      const state = await releaseGate(client, { taskQueue: ctx.config().temporal.taskQueue });
      return gateAnswer(state, describeGate(state), 'ReleaseGateClosed');
    }
    const queues = () => deploymentQueues(ctx);
    if (plan.action === 'marker-gate') {
      const state = await markerGate(client, { taskQueues: queues() });
      return gateAnswer(state, describeMarkerGate(state), 'MarkerGateClosed');
    }
    const target: DeploymentTarget = { connection: client.connection as Connection, namespace: client.options.namespace, deploymentName: ctx.config().temporal.deploymentName, identity: `starter-deploy@${process.pid}` };
    try {
      switch (plan.action) {
        case 'status':
          return shown(await describeDeployment(target));
        case 'ramp': {
          const state = await describeDeployment(target);
          const buildId = plan.buildId ?? newestNotCurrent(state);
          ctx.progress(`ramping build ${buildId}: ${plan.percent} % of new flows (and of auto-upgrading flows), the rest on ${state.current ?? 'unversioned workers'}`);
          return shown(await throughMarkerGate(target, client, buildId, queues(), () => rampBuild(target, buildId, plan.percent)));
        }
        case 'promote': {
          const before = await describeDeployment(target);
          const buildId = plan.buildId ?? before.ramping?.buildId;
          const promote = () => promoteBuild(target, buildId);
          const state = buildId === undefined ? await promote() : await throughMarkerGate(target, client, buildId, queues(), promote);
          if (state.current) await rollOverAfterPromotion(target, state.current, ctx.progress);
          return shown(state);
        }
        case 'rollback':
          return await rollback(target, plan.movePinned, ctx);
        case 'rollout':
          return await rollout(target, plan, ctx);
      }
    } catch (err) {
      if (err instanceof DeploymentRefused || err instanceof DeploymentNotFound) return { ok: false, result: null, failure: { type: err.type, message: err.message } };
      throw err;
    }
  },
};

async function rollback(target: DeploymentTarget, movePinned: boolean, ctx: CommandContext): Promise<CommandOutcome> {
  const done = await rollbackBuild(target);
  ctx.progress(`build ${done.from} no longer takes new flows; they go to ${done.to ? `build ${done.to}` : 'unversioned workers'}`);
  let moved: string[] = [];
  if (movePinned && done.to) {
    const { client } = (await ctx.client()).temporal;
    moved = await movePinnedFlows(target, done.from, done.to, (query) => runIds(client, query));
    ctx.progress(`${moved.length} running flow(s) pinned to ${done.from} moved to ${done.to}`);
  } else ctx.progress(`flows pinned to ${done.from} stay on it: keep its workers until \`deploy status\` shows it DRAINED, or move them with --move-pinned`);
  const outcome = shown(done.state);
  return { ...outcome, result: { from: done.from, to: done.to, moved, deployment: outcome.result } };
}

/** Ramp, gate, promote or roll back, with nobody at the keyboard (temporal/rollout.ts): exit 1 `DeploymentGateFailed` when rolled back. */
async function rollout(target: DeploymentTarget, plan: Extract<DeployPlan, { action: 'rollout' }>, ctx: CommandContext): Promise<CommandOutcome> {
  const { client } = (await ctx.client()).temporal;
  const buildId = plan.buildId ?? newestNotCurrent(await describeDeployment(target));
  const done = await rollOut(target, client, { ...plan, buildId, taskQueues: deploymentQueues(ctx) }, ctx.progress);
  if (done.outcome === 'promoted') return shown(done.state);
  const result = { from: done.rollback.from, to: done.rollback.to, atPercent: done.atPercent, failing: done.failing, moved: done.moved };
  return { ok: false, result, failure: { type: 'DeploymentGateFailed', message: `build ${buildId} was rolled back at ${done.atPercent} %: ${done.failing.length} flow(s) kept failing their workflow tasks`, details: [result] } };
}

/**
 * A gate's answer: passes (exit 0), or closed (exit 1 `failureType`), its sentence naming what holds
 * it: release 2's (`ReleaseGateClosed`: short flows that ran unversioned) and the marker gate
 * (`MarkerGateClosed`: long-lived runs that are not pinned), the whole list in the details.
 */
function gateAnswer(state: { passes: boolean }, sentence: string, failureType: string): CommandOutcome {
  return state.passes ? { ok: true, result: state, text: sentence } : { ok: false, result: state, failure: { type: failureType, message: sentence, details: [state] } };
}

/** The deployment's workflow task queues: the gates look at flows there only (a shared namespace holds other services' flows). */
function deploymentQueues(ctx: CommandContext): string[] {
  return workflowQueues(ctx.config().temporal.taskQueue, ctx.config().nexus.callers.map((c) => c.name));
}

/** The build a ramp means when none is named: the newest one that is not current. */
function newestNotCurrent(state: DeploymentState): string {
  const candidate = [...state.builds].reverse().find((b) => b.buildId !== state.current);
  if (!candidate) throw new DeploymentRefused(`deployment ${state.name} has no build besides the current one (${state.current ?? 'none'}): start the new build's workers first`);
  return candidate.buildId;
}

function shown(state: DeploymentState): CommandOutcome {
  const { conflictToken: _token, ...result } = state;
  const head = `deployment ${state.name}: current ${state.current ?? '(none: unversioned workers)'}${state.ramping ? `, ramping ${state.ramping.buildId} at ${state.ramping.percent} %` : ''}`;
  const rows = state.builds.map((b) => ({ build: b.buildId, status: b.status, drainage: b.drainage ?? '', created: b.createdAt ?? '' }));
  return { ok: true, result, text: `${head}\n${renderTable(rows, ['build', 'status', 'drainage', 'created'])}` };
}

export const DEPLOY_COMMANDS: Record<string, Command> = { deploy: deploy as Command };
