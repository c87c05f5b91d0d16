/**
 * The workflow of `npm run upgrade-on-can-check` (tools/cluster/upgrade-on-can.ts): an entity
 * workflow pinned to the build that runs it, which wakes once a second (the server does not wake a
 * run when its target version changes) and, once the server says a new build is current, continues
 * as new onto it (AUTO_UPGRADE for the new run's first task, pinned from then on). Its state is the
 * builds its runs ran on. Release 3's rule, from the long-lived workflows' own module (src/workflows/lib/roll-over.ts).
 */
import { condition, defineSignal, makeContinueAsNewFunc, setHandler, setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { rollOverOptions, targetBuildChanged } from '../../../src/workflows/lib/roll-over';

export const stopEntity = defineSignal('stop');

export interface EntityState {
  /** The build of each run, oldest first. */
  builds: string[];
}

export async function upgradeOnCanEntity(state: EntityState): Promise<EntityState> {
  const carried = { builds: [...state.builds, workflowInfo().currentDeploymentVersion?.buildId ?? 'unversioned'] };
  let stopped = false;
  setHandler(stopEntity, () => void (stopped = true));
  for (;;) {
    if (await condition(() => stopped, '1s')) return carried;
    if (targetBuildChanged()) return makeContinueAsNewFunc<typeof upgradeOnCanEntity>(rollOverOptions())(carried);
  }
}
setWorkflowOptions({ versioningBehavior: 'PINNED' }, upgradeOnCanEntity);
