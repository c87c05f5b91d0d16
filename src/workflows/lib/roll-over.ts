/**
 * Release 3 (docs/versioning.md): a long-lived workflow is pinned to the build each run runs on and
 * moves to a new one only at a continue-as-new, when the server says the run's target build changed
 * (`targetWorkerDeploymentVersionChanged`, set for pinned runs only: a run of release 2 auto-upgrades
 * and never sees it, so its history replays as it ran, with no marker). The next run's first task
 * then goes to the new build (AUTO_UPGRADE for that task), which pins it. The server never wakes a
 * run for it: a promotion sends `rollOver` (temporal/roll-over.ts), which only wakes the run.
 */
import { setHandler, workflowInfo, type ContinueAsNewOptions } from '@temporalio/workflow';
import { rollOverSignal } from '../../shared/messages';

/** The server says this pinned run's deployment has another target build: the next run goes there. */
export const targetBuildChanged = (): boolean => workflowInfo().targetWorkerDeploymentVersionChanged === true;

/** The options of a continue-as-new: onto the target build when it changed, else where the run is. */
export const rollOverOptions = (): ContinueAsNewOptions => (targetBuildChanged() ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {});

/** Lets a promotion's `rollOver` wake the run: the wait it is in looks at targetBuildChanged(). */
export function wakeOnRollOver(): void {
  setHandler(rollOverSignal, () => undefined);
}
