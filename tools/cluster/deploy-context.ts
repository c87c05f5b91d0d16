/** What the steps of `npm run cluster-deploy` share: the cluster, the flows, the deployment, the checks. */
import type { temporal } from '@temporalio/proto';
import type { DeploymentTarget } from '../../src/temporal/deployments';
import { startWorkers, type Cluster, type Restartable } from './cluster';
import type { DeployFlows, Tracked } from './deploy-flows';
import { fetchHistory, placementOf, type Placement } from './deploy-history';

const began = Date.now();

/** Each line with the time since the run began, so that the output shows how long each step took. */
export function say(line: string): void {
  const s = Math.round((Date.now() - began) / 1000);
  process.stdout.write(`cluster-deploy: [${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}] ${line}\n`);
}

export const elapsed = () => Date.now() - began;

export class Checks {
  readonly failed: string[] = [];
  count = 0;

  /** Prints `line` as held or not; the run passes only when every check held. */
  that(ok: boolean, line: string): boolean {
    this.count++;
    say(`${ok ? 'ok  ' : 'FAIL'} ${line}`);
    if (!ok) this.failed.push(line);
    return ok;
  }
}

export type Build = 'v1' | 'v2' | 'v3';

export interface Rollout {
  cluster: Cluster;
  flows: DeployFlows;
  target: DeploymentTarget;
  /** The variant builds' bundles (v1 runs the cluster's own, the real code). */
  bundles: { v2: string; v3: string };
  workers: Partial<Record<Build, Restartable[]>>;
  checks: Checks;
}

/** `count` worker processes of `build`, with its build ID and, for a variant, its bundle. */
export async function startBuild(r: Pick<Rollout, 'cluster' | 'bundles' | 'workers'>, build: 'v2' | 'v3', count: number): Promise<Restartable[]> {
  const env = { TEMPORAL_WORKER_BUILD_ID: build, TEMPORAL_DEPLOYMENT_BOOTSTRAP: 'never', WORKFLOW_BUNDLE_PATH: r.bundles[build] };
  r.workers[build] = await startWorkers(r.cluster, `${build}-worker`, count, env);
  return r.workers[build];
}

/** The build of a worker process (a failed workflow task names only its worker's identity, pid@host). */
export function buildOfPid(r: Pick<Rollout, 'workers'>): (pid: number) => string | undefined {
  return (pid) => (Object.entries(r.workers) as Array<[Build, Restartable[]]>).find(([, ws]) => ws.some((w) => w.process.pid === pid))?.[0];
}

export const pids = (workers: Restartable[]) => workers.map((w) => w.process.pid).join(', ');

/** Where each of `tracked` ran, from histories read now (each workflow's once). */
export async function placements(r: Rollout, tracked: Tracked[]): Promise<Map<Tracked, Placement>> {
  const histories = await historiesOf(r, [...new Set(tracked.map((t) => t.workflowId).filter(Boolean))]);
  const empty = { events: [] };
  return new Map(tracked.map((t) => [t, placementOf(histories.get(t.workflowId) ?? empty, buildOfPid(r), t.update)]));
}

/** Histories read a few at a time (the machine has two cores, shared with the cluster). */
export async function historiesOf(r: Pick<Rollout, 'cluster'>, workflowIds: string[]): Promise<Map<string, temporal.api.history.v1.IHistory>> {
  const client = r.cluster.client.temporal.client;
  const out = new Map<string, temporal.api.history.v1.IHistory>();
  for (let i = 0; i < workflowIds.length; i += 16) {
    const batch = workflowIds.slice(i, i + 16);
    const got = await Promise.all(batch.map((id) => fetchHistory(client, id)));
    batch.forEach((id, k) => out.set(id, got[k]));
  }
  return out;
}

export const times = <T>(n: number, fn: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => fn(i));
