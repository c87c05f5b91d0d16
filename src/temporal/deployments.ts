/**
 * Worker Deployments (docs/versioning.md): what the server says of our deployment, and the three
 * moves of a rollout (ramp, promote, rollback), for the operator CLI (`deploy …`) and the worker's
 * first-deploy bootstrap. Each move carries the conflict token of the description it was decided
 * on, so two operators (or an operator and a bootstrapping worker) cannot overwrite each other.
 */
import { RELEASE } from '../shared/release';
import type { Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

type VersionSummary = temporal.api.deployment.v1.WorkerDeploymentInfo.IWorkerDeploymentVersionSummary;
const { WorkerDeploymentVersionStatus, VersionDrainageStatus } = temporal.api.enums.v1;

export interface DeploymentTarget {
  connection: Connection;
  namespace: string;
  deploymentName: string;
  /** Who made the change, in the deployment's `lastModifierIdentity`. */
  identity?: string;
}

export interface BuildState {
  buildId: string;
  /** CURRENT, RAMPING, DRAINING (pinned flows still running), DRAINED, INACTIVE. */
  status: string;
  /** Whether pinned flows still run on it, once it stopped being current or ramping (the server checks every few minutes). */
  drainage?: 'DRAINING' | 'DRAINED';
  createdAt?: string;
  lastCurrentAt?: string;
  /** When it last stopped being current or ramping (a server without lastCurrentTime: the best sign of the previous current build). */
  lastDeactivatedAt?: string;
}

export interface DeploymentState {
  name: string;
  /** Unset: no current version, new flows go to unversioned workers. */
  current?: string;
  ramping?: { buildId: string; percent: number };
  builds: BuildState[];
  /** Opaque: a change decided on this description is refused if another came first. */
  conflictToken: Uint8Array;
}

/** The deployment does not exist yet: no versioned worker has polled. */
export class DeploymentNotFound extends Error {
  readonly type = 'DeploymentNotFound';
}

/** A move the deployment's state does not allow (unknown build, nothing ramping, nothing to roll back to, task queues not yet polled): nothing changed. */
export class DeploymentRefused extends Error {
  readonly type = 'DeploymentRefused';
}

/** The server refuses a routing change that would leave a task queue without workers (the new build's have not polled every one yet). */
async function routing<T>(change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (err) {
    if ((err as { code?: number }).code === 9) throw new DeploymentRefused(`the server refused: ${(err as Error).message.replace(/^9 FAILED_PRECONDITION: /, '')} (start the build's workers, wait until they poll, and try again)`);
    throw err;
  }
}

/**
 * The server keeps a deployment in a workflow that continues as new after every change (each
 * move, each drainage update of a version): a describe that falls between two runs answers
 * NOT_FOUND for a deployment that exists (seen on 1.29.1 by `npm run cluster-deploy`, right after a
 * promotion). NOT_FOUND is believed only when it is still the answer after these pauses.
 */
const NOT_FOUND_PAUSES_MS = [100, 250, 500, 1000];

export async function describeDeployment(t: DeploymentTarget): Promise<DeploymentState> {
  let answer: temporal.api.workflowservice.v1.IDescribeWorkerDeploymentResponse;
  for (let attempt = 0; ; attempt++) {
    try {
      answer = await t.connection.workflowService.describeWorkerDeployment({ namespace: t.namespace, deploymentName: t.deploymentName });
      break;
    } catch (err) {
      if ((err as { code?: number }).code !== 5) throw err;
      if (attempt >= NOT_FOUND_PAUSES_MS.length) throw new DeploymentNotFound(`no worker deployment ${t.deploymentName} in namespace ${t.namespace}: no versioned worker (TEMPORAL_WORKER_BUILD_ID) has polled yet`);
      await new Promise((resolve) => setTimeout(resolve, NOT_FOUND_PAUSES_MS[attempt]));
    }
  }
  const info = answer.workerDeploymentInfo ?? {};
  const routing = info.routingConfig ?? {};
  const ramping = routing.rampingDeploymentVersion?.buildId;
  return {
    name: info.name ?? t.deploymentName,
    ...(routing.currentDeploymentVersion?.buildId ? { current: routing.currentDeploymentVersion.buildId } : {}),
    ...(ramping ? { ramping: { buildId: ramping, percent: routing.rampingVersionPercentage ?? 0 } } : {}),
    builds: (info.versionSummaries ?? []).map(buildState).sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '')),
    conflictToken: answer.conflictToken ?? new Uint8Array(),
  };
}

/** Sends `percent` of new flows (and auto-upgrading ones) to `buildId`, the rest to the current build. */
export async function rampBuild(t: DeploymentTarget, buildId: string, percent: number, state?: DeploymentState): Promise<DeploymentState> {
  const before = state ?? (await describeDeployment(t));
  assertKnownBuild(before, buildId);
  if (before.current === buildId) throw new DeploymentRefused(`build ${buildId} is already current: nothing to ramp`);
  // Asked again after an answer that never came: the first ask may have taken effect.
  if (before.ramping?.buildId === buildId && before.ramping.percent === percent) return before;
  await routing(() => t.connection.workflowService.setWorkerDeploymentRampingVersion({ ...request(t, before), buildId, percentage: percent }));
  return describeDeployment(t);
}

/** Makes `buildId` current (default: the ramping build): new flows start on it, auto-upgrading flows move to it. */
export async function promoteBuild(t: DeploymentTarget, buildId?: string, state?: DeploymentState): Promise<DeploymentState> {
  const before = state ?? (await describeDeployment(t));
  const target = buildId ?? before.ramping?.buildId;
  if (!target) throw new DeploymentRefused('nothing is ramping: name the build to promote (--build ID)');
  assertKnownBuild(before, target);
  if (before.current === target) return before;
  await routing(() => t.connection.workflowService.setWorkerDeploymentCurrentVersion({ ...request(t, before), buildId: target }));
  return describeDeployment(t);
}

export interface Rollback {
  /** The build taken out of service: the ramping one, or the current one when nothing ramped. */
  from: string;
  /** The build current after the rollback; unset when none is (new flows go to unversioned workers). */
  to?: string;
  state: DeploymentState;
}

/**
 * Takes the newest build out of service. A ramp is stopped (the current build takes every new
 * flow again); with nothing ramping, the build that was current before this one becomes current
 * again. Pinned flows that started on the build taken out stay on it until they end (its workers
 * must keep running) unless moved (`movePinnedFlows`).
 */
export async function rollbackBuild(t: DeploymentTarget, state?: DeploymentState): Promise<Rollback> {
  const before = state ?? (await describeDeployment(t));
  if (before.ramping) {
    await routing(() => t.connection.workflowService.setWorkerDeploymentRampingVersion({ ...request(t, before), buildId: '', percentage: 0 }));
    return { from: before.ramping.buildId, ...(before.current ? { to: before.current } : {}), state: await describeDeployment(t) };
  }
  if (!before.current) throw new DeploymentRefused('no current build to roll back from');
  // The server's lastCurrentTime where it keeps one (newer servers); else the build most recently taken out of service.
  const when = (b: BuildState) => b.lastCurrentAt ?? b.lastDeactivatedAt ?? '';
  const previous = before.builds.filter((b) => b.buildId !== before.current && when(b)).sort((a, b) => when(b).localeCompare(when(a)))[0];
  if (!previous) throw new DeploymentRefused(`build ${before.current} is the only build that was ever current: nothing to roll back to`);
  await routing(() => t.connection.workflowService.setWorkerDeploymentCurrentVersion({ ...request(t, before), buildId: previous.buildId }));
  return { from: before.current, to: previous.buildId, state: await describeDeployment(t) };
}

/** This code's release (shared/release.ts); a version's workers record it in the version's metadata (`recordRelease`), and a version without it is release 1. */
export { RELEASE };
const RELEASE_KEY = 'card-issuing-release';

/** The release of a version, from its metadata: 1 when it records none (release 1 recorded nothing). */
export async function releaseOf(t: DeploymentTarget, buildId: string): Promise<number> {
  return (await recordedRelease(t, buildId)) ?? 1;
}

/** The release a version's workers recorded (`recordRelease`); undefined until they did (and for release 1). */
export async function recordedRelease(t: DeploymentTarget, buildId: string): Promise<number | undefined> {
  const described = await t.connection.workflowService.describeWorkerDeploymentVersion({ namespace: t.namespace, deploymentVersion: { deploymentName: t.deploymentName, buildId } });
  const entry = described.workerDeploymentVersionInfo?.metadata?.entries?.[RELEASE_KEY];
  const release = entry ? defaultPayloadConverter.fromPayload<unknown>(entry) : undefined;
  return typeof release === 'number' ? release : undefined;
}

/**
 * Records this code's release in the version's metadata, asked until the server knows the version
 * (its workers polled) or `signal` aborts: what `movePinnedFlows` reads before it moves a flow.
 */
export async function recordRelease(t: DeploymentTarget, buildId: string, signal?: AbortSignal): Promise<void> {
  await untilVersionKnown(`recording the release of build ${buildId}`, signal, async () => {
    await t.connection.workflowService.updateWorkerDeploymentVersionMetadata({
      namespace: t.namespace,
      deploymentVersion: { deploymentName: t.deploymentName, buildId },
      upsertEntries: { [RELEASE_KEY]: defaultPayloadConverter.toPayload(RELEASE) },
      identity: t.identity,
    });
    return true;
  });
}

/**
 * Moves the running flows pinned to `fromBuild` onto `toBuild` (a pinned override): after a rollback
 * of a build whose change fails its flows' workflow tasks, they replay on the build rolled back to.
 * Only safe for flows whose history that build can replay: what the bad build recorded must be
 * what the good one would have (docs/versioning.md, "Rollback"). Refused (DeploymentRefused,
 * nothing moved) when `toBuild` is of an earlier release than `fromBuild`: it could not replay them.
 */
export async function movePinnedFlows(t: DeploymentTarget, fromBuild: string, toBuild: string, list: (query: string) => AsyncIterable<{ workflowId: string; runId: string }>): Promise<string[]> {
  const [fromRelease, toRelease] = await Promise.all([releaseOf(t, fromBuild), releaseOf(t, toBuild)]);
  if (toRelease < fromRelease) {
    throw new DeploymentRefused(`the flows pinned to build ${fromBuild} (release ${fromRelease}) were not moved to build ${toBuild} (release ${toRelease}): an earlier release cannot replay them. They stay on ${fromBuild}: keep its workers until they end, or move them to a build of release ${fromRelease} or later`);
  }
  const moved: string[] = [];
  const query = `TemporalWorkerDeploymentVersion = '${t.deploymentName}:${fromBuild}' AND ExecutionStatus = 'Running' AND TemporalWorkflowVersioningBehavior = 'Pinned'`;
  for await (const flow of list(query)) {
    await pinRun(t, flow, toBuild);
    moved.push(flow.workflowId);
  }
  return moved;
}

/** Pins one run to `buildId` (a pinned override): its tasks go to that build's workers until it ends. */
export async function pinRun(t: DeploymentTarget, run: { workflowId: string; runId: string }, buildId: string): Promise<void> {
  await t.connection.workflowService.updateWorkflowExecutionOptions({
    namespace: t.namespace,
    workflowExecution: { workflowId: run.workflowId, runId: run.runId },
    workflowExecutionOptions: {
      versioningOverride: { pinned: { behavior: temporal.api.workflow.v1.VersioningOverride.PinnedOverrideBehavior.PINNED_OVERRIDE_BEHAVIOR_PINNED, version: { deploymentName: t.deploymentName, buildId } } },
    },
    updateMask: { paths: ['versioning_override'] },
    identity: t.identity,
  });
}

/**
 * A worker's first deploy: when the deployment has no current version, this build becomes current
 * (without it, new flows would wait for unversioned workers that no longer run). Never replaces a
 * current version: a rollout after the first is the operator's (`deploy ramp|promote`). The server
 * knows a version only once its workers polled, so this is asked until it does (or `signal` aborts).
 */
export async function bootstrapCurrentBuild(t: DeploymentTarget, buildId: string, signal?: AbortSignal): Promise<'set' | 'kept'> {
  return untilVersionKnown(`bootstrap of build ${buildId}`, signal, async () => {
    const state = await describeDeployment(t);
    if (state.current) return 'kept';
    if (!state.builds.some((b) => b.buildId === buildId)) return undefined;
    await t.connection.workflowService.setWorkerDeploymentCurrentVersion({ ...request(t, state), buildId });
    return 'set';
  });
}

/**
 * Asks `attempt` until it answers (not undefined), backing off to 5 s while the server does not know
 * the version yet (its workers have not polled: NOT_FOUND, no deployment) or another change came
 * first; any other failure ends it, and so does `signal`.
 */
async function untilVersionKnown<T>(what: string, signal: AbortSignal | undefined, attempt: () => Promise<T | undefined>): Promise<T> {
  for (let delay = 200; ; delay = Math.min(delay * 2, 5000)) {
    try {
      const answer = await attempt();
      if (answer !== undefined) return answer;
    } catch (err) {
      if (!(err instanceof DeploymentNotFound) && (err as { code?: number }).code !== 5 && !isMomentary(err)) throw err;
    }
    if (signal?.aborted) throw new Error(`${what} aborted`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

function request(t: DeploymentTarget, state: DeploymentState) {
  return { namespace: t.namespace, deploymentName: t.deploymentName, conflictToken: state.conflictToken, identity: t.identity ?? `card-issuing-cli@${process.pid}` };
}

function assertKnownBuild(state: DeploymentState, buildId: string): void {
  if (!state.builds.some((b) => b.buildId === buildId)) {
    throw new DeploymentRefused(`build ${buildId} is not a version of deployment ${state.name} (known: ${state.builds.map((b) => b.buildId).join(', ') || 'none'}): start its workers first`);
  }
}

/**
 * Worth asking again: another change came first (conflict token), the version's task queues are
 * still being registered, or the deployment's own workflow was busy with a change and answered late
 * or not at all (DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, UNAVAILABLE: seen under a loaded
 * CI machine while a new build's workers recorded their release beside a rollout's ramp).
 */
export function isMomentary(err: unknown): boolean {
  return [4, 8, 9, 10, 14].includes((err as { code?: number }).code ?? -1);
}

function buildState(v: VersionSummary): BuildState {
  const drainage = v.drainageInfo?.status ?? v.drainageStatus;
  return {
    buildId: v.deploymentVersion?.buildId ?? '',
    status: statusName(v.status),
    ...(drainage === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINING ? { drainage: 'DRAINING' as const } : {}),
    ...(drainage === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED ? { drainage: 'DRAINED' as const } : {}),
    ...(v.createTime ? { createdAt: isoOf(v.createTime) } : {}),
    ...(v.lastCurrentTime ? { lastCurrentAt: isoOf(v.lastCurrentTime) } : {}),
    ...(v.lastDeactivationTime ? { lastDeactivatedAt: isoOf(v.lastDeactivationTime) } : {}),
  };
}

function statusName(status: temporal.api.enums.v1.WorkerDeploymentVersionStatus | null | undefined): string {
  const name = WorkerDeploymentVersionStatus[status ?? 0] ?? 'UNSPECIFIED';
  return name.replace(/^WORKER_DEPLOYMENT_VERSION_STATUS_/, '');
}

function isoOf(ts: { seconds?: number | { toNumber(): number } | null; nanos?: number | null }): string {
  return new Date((typeof ts.seconds === 'object' && ts.seconds ? ts.seconds.toNumber() : (ts.seconds ?? 0)) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString();
}
