/**
 * `npm run upgrade-on-can-check [-- --bin-dir DIR]` (opt-in, not part of `npm test`): does this
 * Temporal server move a pinned run to a new current build at continue-as-new? Releases 3 and 4 rest
 * on it (docs/versioning.md, "Releases 3 and 4"). On the cluster's server (tools/cluster/server-build.ts, built
 * once) with PostgreSQL, or on the server and SQL tool in DIR (e.g. the v1.29.1 one, to see it not):
 * a run of tools/cluster/builds/upgrade-on-can.ts starts pinned on build v1; build v2's worker polls
 * and v2 becomes current; the run must continue as new onto v2 by itself. Exit 0 when it did,
 * 1 when it did not within 20 s.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { BUNDLER_LOGGER } from '../../src/fleet/nexus-bundle';
import { freePort } from '../../src/ports';
import { describeDeployment, promoteBuild, type DeploymentTarget } from '../../src/temporal/deployments';
import { pause, runToExit, serverVersion, stoppers, until } from './cluster';
import { prepareNamespace } from './namespace';
import { startPostgres } from './postgres';
import { ensureTemporalServer, type ServerBinaries } from './server-build';
import { setupSchema, startClusterServer } from './temporal-server';
import type { EntityState } from './builds/upgrade-on-can';

const NAMESPACE = 'upgrade-on-can';
const TASK_QUEUE = 'upgrade-on-can';
const say = (line: string) => process.stdout.write(`upgrade-on-can-check: ${line}\n`);

function binaries(): Promise<ServerBinaries> {
  const i = process.argv.indexOf('--bin-dir');
  if (i < 0) return ensureTemporalServer(say);
  const dir = process.argv[i + 1];
  if (!dir) throw new Error('--bin-dir needs a directory holding `server` and `sql` (e.g. ~/.cache/card-issuing/temporal-server/v1.29.1)');
  return Promise.resolve({ version: dir, server: join(dir, 'server'), sqlTool: join(dir, 'sql') });
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'upgrade-on-can-'));
  chmodSync(dir, 0o755); // PostgreSQL runs as its own user below it
  say(`run directory (the server's log): ${dir}`);
  const bin = await binaries();
  const pg = await startPostgres({ dir: join(dir, 'postgres'), port: await freePort(), log: say });
  stoppers.push(() => pg.stop());
  setupSchema(bin, pg, say);
  const server = await startClusterServer({ bin, pg, dir });
  stoppers.push(() => server.stop());
  await prepareNamespace(server.address, NAMESPACE);
  const version = await serverVersion(server.address);
  say(`Temporal server ${version} on ${server.address} (${bin.server}), namespace ${NAMESPACE}`);

  const connection = await Connection.connect({ address: server.address });
  stoppers.push(() => connection.close());
  const native = await NativeConnection.connect({ address: server.address });
  stoppers.push(() => native.close());
  const client = new Client({ connection, namespace: NAMESPACE });
  const deploymentName = `upgrade-on-can-${randomUUID().slice(0, 8)}`;
  const target: DeploymentTarget = { connection, namespace: NAMESPACE, deploymentName, identity: 'upgrade-on-can-check' };
  const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./builds/upgrade-on-can'), logger: BUNDLER_LOGGER });
  const startBuild = async (buildId: string) => {
    const worker = await Worker.create({ connection: native, namespace: NAMESPACE, taskQueue: TASK_QUEUE, workflowBundle: bundle, workerDeploymentOptions: { useWorkerVersioning: true, version: { deploymentName, buildId }, defaultVersioningBehavior: 'PINNED' } });
    const running = worker.run();
    stoppers.push(async () => {
      worker.shutdown();
      await running;
    });
    // A promotion is refused until the build's worker has polled the queue: asked again until it takes.
    await until(`build ${buildId} current`, async () => (await promoteBuild(target, buildId).catch(() => undefined))?.current === buildId, 60_000);
    say(`build ${buildId} polls ${TASK_QUEUE} and is current`);
  };

  await startBuild('v1');
  const handle = await client.workflow.start('upgradeOnCanEntity', { taskQueue: TASK_QUEUE, workflowId: `entity-${randomUUID()}`, args: [{ builds: [] }] });
  await until('the run pinned to v1', async () => (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId === 'v1', 30_000);
  say(`${handle.workflowId} runs pinned on v1 (run ${handle.firstExecutionRunId})`);
  await startBuild('v2');
  let moved = false;
  for (let waited = 0; waited < 20_000 && !moved; waited += 500) {
    await pause(500);
    const latest = await handle.describe();
    moved = latest.runId !== handle.firstExecutionRunId && latest.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId === 'v2';
  }
  await client.workflow.getHandle(handle.workflowId).signal('stop');
  const result = (await client.workflow.getHandle(handle.workflowId).result()) as EntityState;
  say(`its runs ran on: ${result.builds.join(' → ')}; deployment ${deploymentName}: current ${(await describeDeployment(target)).current}`);
  say(moved ? `the pinned run continued as new onto v2 by itself: server ${version} upgrades on continue-as-new` : `the run stayed on v1: server ${version} does not tell a pinned run of a new current build`);
  // Moved, and the state carried: the first run's build, then the new one's.
  return moved && result.builds.join(',') === 'v1,v2' ? 0 : 1;
}

runToExit(main, say);
