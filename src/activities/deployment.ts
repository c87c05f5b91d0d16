/**
 * What a pinned run asks before it moves to another build at a continue-as-new (workflows/lib/roll-over.ts):
 * the release of the builds the server may hand it, the deployment's current and ramping ones (the
 * ramp's share is the server's to pick). Read from each version's metadata (temporal/deployments.ts).
 */
import type { Connection } from '@temporalio/client';
import { describeDeployment, releaseOf } from '../temporal/deployments';
import type { ActivityDeps } from './index';

export function createDeploymentActivities({ temporal, deploymentName }: Pick<ActivityDeps, 'temporal' | 'deploymentName'>) {
  return {
    /** The lowest release among the current and ramping builds; undefined on unversioned workers or with no build current. */
    async targetRelease(): Promise<number | undefined> {
      if (!deploymentName) return undefined;
      const target = { connection: temporal.connection as Connection, namespace: temporal.options.namespace, deploymentName };
      const state = await describeDeployment(target);
      const builds = [state.current, state.ramping?.buildId].filter((b): b is string => typeof b === 'string' && b !== '');
      if (builds.length === 0) return undefined;
      return Math.min(...(await Promise.all(builds.map((buildId) => releaseOf(target, buildId)))));
    },
  };
}
