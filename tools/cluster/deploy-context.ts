/** What the steps of `npm run cluster-deploy` share: the cluster, the flows, the deployment, the checks. */
import type { temporal } from '@temporalio/proto';
import type { DeploymentTarget } from '../../src/temporal/deployments';
import { startWorkers, type Cluster, type Restartable } from './cluster';
import type { DeployFlows, Tracked } from './deploy-flows';
import { chainOf, fetchHistory, holdsUpdate, placementOf, type Placement } from './deploy-history';

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

/**
 * Where each of `tracked` ran, from histories read now (each workflow's once). A card update is
 * looked for in every run of its card workflow's chain: the run that took it may have continued as new since.
 */
export async function placements(r: Rollout, tracked: Tracked[]): Promise<Map<Tracked, Placement>> {
  const ids = (updates: boolean) => [...new Set(tracked.filter((t) => !!t.update === updates).map((t) => t.workflowId).filter(Boolean))];
  const [histories, chains] = await Promise.all([historiesOf(r, ids(false)), chainsOf(r, ids(true))]);
  const empty = { events: [] };
  const historyOf = (t: Tracked) => (t.update ? chains.get(t.workflowId)?.find((h) => holdsUpdate(h, t.update!)) : histories.get(t.workflowId));
  return new Map(tracked.map((t) => [t, placementOf(historyOf(t) ?? empty, buildOfPid(r), t.update)]));
}

type History = temporal.api.history.v1.IHistory;

/** Histories of the latest runs, read a few at a time (the machine has two cores, shared with the cluster). */
export function historiesOf(r: Pick<Rollout, 'cluster'>, workflowIds: string[]): Promise<Map<string, History>> {
  return fewAtATime(workflowIds, (id) => fetchHistory(r.cluster.client.temporal.client, id));
}

/** Each workflow ID's whole continue-as-new chain, oldest run first. */
export function chainsOf(r: Pick<Rollout, 'cluster'>, workflowIds: string[]): Promise<Map<string, History[]>> {
  return fewAtATime(workflowIds, (id) => chainOf(r.cluster.client.temporal.client, id));
}

async function fewAtATime<T>(workflowIds: string[], read: (id: string) => Promise<T>): Promise<Map<string, T>> {
  const out = new Map<string, T>();
  for (let i = 0; i < workflowIds.length; i += 16) {
    const batch = workflowIds.slice(i, i + 16);
    const got = await Promise.all(batch.map(read));
    batch.forEach((id, k) => out.set(id, got[k]));
  }
  return out;
}

export const times = <T>(n: number, fn: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => fn(i));
