/**
 * Releases 3 and 4 (docs/versioning.md): a long-lived workflow is pinned to the build each run runs
 * on and moves to a new one only at a continue-as-new, when the server says the run's target build
 * changed (`targetWorkerDeploymentVersionChanged`, set for pinned runs only). The next run's first
 * task then goes to the new build (AUTO_UPGRADE for that task), which pins it: a run never changes
 * code mid-history, so no change needs a marker. The server never wakes a run for it: a promotion
 * sends `rollOver` (temporal/roll-over.ts), which only wakes the run.
 */
import { makeContinueAsNewFunc, setHandler, workflowInfo, type ContinueAsNewOptions, type Workflow } from '@temporalio/workflow';
import { rollOverSignal } from '../../shared/messages';
import { RELEASE } from '../../shared/release';
import { unmeteredActivities } from './provider';

/** The server says this pinned run's deployment has another target build: the next run goes there. */
export const targetBuildChanged = (): boolean => workflowInfo().targetWorkerDeploymentVersionChanged === true;

/** The options of a continue-as-new: onto the target build when it changed, else where the run is. */
export const rollOverOptions = (): ContinueAsNewOptions => (targetBuildChanged() ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {});

/** Lets a promotion's `rollOver` wake the run: the wait it is in looks at targetBuildChanged(). */
export function wakeOnRollOver(): void {
  setHandler(rollOverSignal, () => undefined);
}

/** Continues this run as new with `args`, onto its changed target build (rollOverOptions). */
export function rollOverWith<F extends Workflow>(...args: Parameters<F>): Promise<never> {
  return makeContinueAsNewFunc<F>(rollOverOptions())(...args);
}

/**
 * What the run before handed this one across a continue-as-new: believed only then (only a run of
 * ours continues as new), never from a caller's start, which could otherwise skip a check or a wait.
 */
export function carriedOver<T>(value: T | undefined): T | undefined {
  return workflowInfo().continuedFromExecutionRunId === undefined ? undefined : value;
}

/** A caller's start that sets `field`, which only a run continued as new carries: refused as any unknown field is, naming it. */
export function carriedFieldErrors(input: unknown, field: string, of: string): Record<string, string> {
  const set = typeof input === 'object' && input !== null && field in input;
  return set && workflowInfo().continuedFromExecutionRunId === undefined ? { [field]: `is not a field of ${of}: a run carries it across a continue-as-new only` } : {};
}

/**
 * Whether the builds the run may be handed are of this release or a later one. A run that carries
 * what only this release reads (a payout's created order, an onboarding's wait without the
 * applicant) must not move to an earlier release, which a rollback across releases makes the target.
 * Asked once the server says the target changed: one read of the deployment.
 */
export async function targetTakesThisRelease(): Promise<boolean> {
  const release = await unmeteredActivities.targetRelease();
  return release === undefined || release >= RELEASE;
}
