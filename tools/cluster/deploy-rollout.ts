/**
 * The rollout moves of `npm run cluster-deploy` as an operator makes them, through
 * src/temporal/deployments.ts: what the deployment says, a move asked again while the server
 * refuses it for a reason that passes (a new build's workers have not polled every task queue yet),
 * and a build watched until its pinned flows have drained.
 */
import type { Connection } from '@temporalio/client';
import { describeDeployment, type BuildState, type DeploymentState, type DeploymentTarget } from '../../src/temporal/deployments';
import { pause } from './cluster';

export function deploymentTarget(connection: Connection, namespace: string, deploymentName: string): DeploymentTarget {
  return { connection, namespace, deploymentName, identity: `cluster-deploy@${process.pid}` };
}

/** "current v2, ramping v3 40 %; builds v1 DRAINED, v2 CURRENT, v3 RAMPING" */
export function describeState(s: DeploymentState): string {
  const builds = s.builds.map((b) => `${b.buildId} ${b.status}${b.drainage && b.drainage !== b.status ? ` (drainage ${b.drainage})` : ''}`).join(', ');
  return `current ${s.current ?? 'none'}${s.ramping ? `, ramping ${s.ramping.buildId} ${s.ramping.percent} %` : ''}; builds ${builds}`;
}


export interface Drainage {
  /** Each status the build showed, with the time since the watch began. */
  seen: Array<{ status: string; atMs: number }>;
  drained: boolean;
  /** The last describe that failed, if any (the watch goes on: it never rejects). */
  lastError?: string;
}

/**
 * Watches `buildId` (its status and drainage) until DRAINED: the server counts the build's open
 * pinned flows in visibility after a grace period, then at every refresh interval (the run's
 * dynamic config sets both to seconds; the defaults are minutes).
 */
export async function watchDrainage(t: DeploymentTarget, buildId: string, timeoutMs: number): Promise<Drainage> {
  const began = Date.now();
  const seen: Drainage['seen'] = [];
  let lastError: string | undefined;
  while (Date.now() - began < timeoutMs) {
    try {
      const build = (await describeDeployment(t)).builds.find((b) => b.buildId === buildId);
      const status = build ? statusOf(build) : 'unknown';
      if (seen[seen.length - 1]?.status !== status) seen.push({ status, atMs: Date.now() - began });
      if (status === 'DRAINED') return { seen, drained: true };
    } catch (err) {
      lastError = (err as Error).message;
    }
    await pause(500);
  }
  return { seen, drained: false, lastError };
}

/** DRAINING or DRAINED once the build stopped taking new flows, whichever field the server filled. */
function statusOf(b: BuildState): string {
  return b.status === 'DRAINED' || b.drainage === 'DRAINED' ? 'DRAINED' : b.status === 'DRAINING' || b.drainage === 'DRAINING' ? 'DRAINING' : b.status;
}
