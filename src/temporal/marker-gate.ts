/**
 * The marker gate (docs/versioning.md, "Releases 3 and 4"): release 4 dropped every patch marker, so a build
 * of it may take flows (a ramp, a promotion, a rollout) only once no running run can replay on it a
 * history that took a marker. A pinned run never does: it stays on its build and reaches a new one
 * only by a continue-as-new, which starts a fresh history.
 *
 * Two kinds of run are not pinned on a build of release 3:
 * - a run of a type release 3 pinned (an entity, an open item, a reconciliation run) that has not
 *   run a task there yet: one of release 2, or one on an unversioned worker. It blocks the gate
 *   until its next task on release 3 pins it (a promotion's rollOver, or its next event), or it ends;
 * - a run of a type release 3 let auto-upgrade (a payout, an onboarding: RELEASE_3_AUTO_UPGRADING).
 *   Such runs are started all the time, so none is waited for: each is held on the build it runs on
 *   (a pinned override, `holdAutoUpgrading`) right before and right after the routing change, and
 *   ends there; that build's workers run until `deploy status` shows it DRAINED.
 *
 * `deploy marker-gate` reports both (exit 1 `MarkerGateClosed` while a run blocks); `deploy ramp`,
 * `promote` and `rollout` of a build of release 4 or later hold, check and refuse
 * (`DeploymentRefused`, nothing changed) while the gate is closed (`clearForMarkerless`).
 */
import type { Client } from '@temporalio/client';
import { ROLLING_FLOWS } from '../shared/pinned-flows';
import { literal } from '../shared/reconciliation';
import { DeploymentRefused, describeDeployment, pinRun, recordedRelease, type DeploymentTarget } from './deployments';
import { runIds } from './run-ids';

/** The first release without markers. */
export const MARKERLESS_RELEASE = 4;

/** The long-lived types release 3 let auto-upgrade: held on their build rather than waited for. */
export const RELEASE_3_AUTO_UPGRADING = ['sendPayout', 'trackPayout', 'onboardCardholder'] as const;

export interface UnpinnedRun {
  workflowId: string;
  runId: string;
  type: string;
  startedAt: string;
}

export interface MarkerGate {
  /** True when no running run blocks a markerless build: every long-lived run is pinned, or one a promotion holds. */
  passes: boolean;
  /** How many blocking runs the query found, up to MAX_LISTED (more: `unchecked`). */
  open: number;
  /** The oldest of them, up to `limit`. */
  runs: UnpinnedRun[];
  /** Runs of RELEASE_3_AUTO_UPGRADING that are not pinned: a ramp or promotion of a markerless build holds them on their build. */
  toHold: number;
  unchecked?: boolean;
}

const MAX_LISTED = 1000;

/**
 * The Nexus relay asked no marker in release 3 and release 4 did not change it, so its runs replay on
 * either; its workers are unversioned (fleet/workers.ts), so its runs are never pinned and would
 * otherwise close the gate for as long as any relay waits.
 */
const UNMARKED_IN_RELEASE_3: readonly string[] = ['onboardingRelay'];

const notPinned = "(TemporalWorkflowVersioningBehavior IS NULL OR TemporalWorkflowVersioningBehavior != 'Pinned')";
const blockingTypes = ROLLING_FLOWS.filter((type) => !(RELEASE_3_AUTO_UPGRADING as readonly string[]).includes(type) && !UNMARKED_IN_RELEASE_3.includes(type));

/** Running runs of the long-lived types on the deployment's workflow queues that are not pinned: `kind` says which of the two. */
export function markerGateQuery(taskQueues: string[], kind: 'blocking' | 'toHold' = 'blocking'): string {
  const types = kind === 'blocking' ? blockingTypes : RELEASE_3_AUTO_UPGRADING;
  return `ExecutionStatus = 'Running' AND TaskQueue IN (${taskQueues.map(literal).join(', ')}) AND WorkflowType IN (${types.map(literal).join(', ')}) AND ${notPinned}`;
}

export async function markerGate(client: Client, { taskQueues, limit = 20 }: { taskQueues: string[]; limit?: number }): Promise<MarkerGate> {
  const runs: UnpinnedRun[] = [];
  let unchecked = false;
  for await (const run of runIds(client, markerGateQuery(taskQueues))) {
    if (runs.length >= MAX_LISTED) {
      unchecked = true;
      break;
    }
    runs.push({ workflowId: run.workflowId, runId: run.runId, type: run.type, startedAt: run.startTime.toISOString() });
  }
  runs.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const { count } = await client.workflowService.countWorkflowExecutions({ namespace: client.options.namespace, query: markerGateQuery(taskQueues, 'toHold') });
  return { passes: runs.length === 0 && !unchecked, open: runs.length, runs: runs.slice(0, limit), toHold: Number(count ?? 0), ...(unchecked ? { unchecked } : {}) };
}

/** A sentence naming the blocking runs, and how many a promotion would hold (the CLI's answer). */
export function describeMarkerGate(gate: MarkerGate): string {
  const held = gate.toHold > 0 ? `; ${gate.toHold} running payout or onboarding run(s) of release 3 will be held on their build when a markerless build takes flows` : '';
  if (gate.passes) return `marker gate passes: every running long-lived run is pinned; a build of release ${MARKERLESS_RELEASE} may take flows${held}`;
  const named = gate.runs.map((r) => `${r.type} ${r.workflowId}`).join(', ');
  const count = gate.unchecked ? `more than ${MAX_LISTED}` : String(gate.open);
  return (
    `marker gate closed: ${count} running long-lived run(s) are not pinned (${named}${gate.open > gate.runs.length || gate.unchecked ? ', …' : ''}); a build without markers could not replay them. ` +
    `Each is pinned by its next workflow task on a build of release 3 (a promotion's rollOver, or its next event), or ends${held}`
  );
}

/**
 * Pins each running run of RELEASE_3_AUTO_UPGRADING that is not pinned to `buildId` (the current
 * build, of release 3), where it ends. Returns their workflow IDs.
 */
export async function holdAutoUpgrading(t: DeploymentTarget, client: Client, taskQueues: string[], buildId: string): Promise<string[]> {
  const held: string[] = [];
  for await (const run of runIds(client, markerGateQuery(taskQueues, 'toHold'))) {
    await pinRun(t, run, buildId);
    held.push(run.workflowId);
  }
  return held;
}

/**
 * Before `buildId` takes flows: nothing to do for a build of an earlier release. For a markerless
 * one, refused while the current build is of release 2 or earlier (release 3 must be current first,
 * so that every long-lived run is pinned), else the auto-upgrading runs are held on the current
 * build and the gate must pass. Returns `after`, to call once routing changed: it holds the runs
 * that started on the current build in between.
 */
export async function clearForMarkerless(t: DeploymentTarget, client: Client, buildId: string, taskQueues: string[]): Promise<{ held: string[]; after: () => Promise<string[]> }> {
  const none = { held: [], after: async () => [] };
  // A build no worker runs yet is the routing change's to refuse (DeploymentRefused, naming the known ones).
  const { current, builds } = await describeDeployment(t);
  if (!current || current === buildId || !builds.some((b) => b.buildId === buildId)) return none;
  // The current build's release first: once it is markerless, as it will be from then on, nothing waits for the new build's.
  const currentRelease = await releaseOnceRecorded(t, current);
  if (currentRelease >= MARKERLESS_RELEASE) return none;
  if ((await releaseOnceRecorded(t, buildId)) < MARKERLESS_RELEASE) return none;
  if (currentRelease < MARKERLESS_RELEASE - 1) {
    throw new DeploymentRefused(`build ${buildId} is of release ${MARKERLESS_RELEASE} (no markers) and the current build ${current} is of release ${currentRelease}: make a build of release ${MARKERLESS_RELEASE - 1} current first, so that every long-lived run is pinned`);
  }
  const held = await holdAutoUpgrading(t, client, taskQueues, current);
  const gate = await markerGate(client, { taskQueues });
  if (!gate.passes) throw new DeploymentRefused(`build ${buildId} may not take flows yet: ${describeMarkerGate(gate)}`);
  return { held, after: () => holdAutoUpgrading(t, client, taskQueues, current) };
}

/**
 * A routing change that lets `buildId` take flows (a ramp, a promotion), through the gate: the
 * auto-upgrading runs held and the gate checked before it, the runs started meanwhile held after it.
 */
export async function throughMarkerGate<T>(t: DeploymentTarget, client: Client, buildId: string, taskQueues: string[], change: () => Promise<T>): Promise<T> {
  const { after } = await clearForMarkerless(t, client, buildId, taskQueues);
  const changed = await change();
  await after();
  return changed;
}

/** How long a build's workers may take to record its release once the server knows the version. */
const RECORDING_WAIT_MS = 30_000;

/**
 * The release `buildId` recorded. Its workers record it right after their first poll, so a version
 * just seen may not have it yet: asked until it does, and refused past RECORDING_WAIT_MS (a build
 * of release 1 recorded none, and no build of it is ramped any more).
 */
async function releaseOnceRecorded(t: DeploymentTarget, buildId: string): Promise<number> {
  const deadline = Date.now() + RECORDING_WAIT_MS;
  for (;;) {
    const release = await recordedRelease(t, buildId);
    if (release !== undefined) return release;
    if (Date.now() > deadline) throw new DeploymentRefused(`build ${buildId} has recorded no release in its version's metadata (its workers record it once they poll): start them with this code's worker, or wait until they polled`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
