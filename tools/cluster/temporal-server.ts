/**
 * A real Temporal server (not the dev server): the binary built from go.temporal.io/server,
 * persistence and visibility in PostgreSQL (SQL visibility, no Elasticsearch), the schema set up
 * by Temporal's own SQL tool from the schemas embedded in it, one config file written here.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../../src/ports';
import { DEV_DYNAMIC_CONFIG, stopProcessGroup, waitUntilServing } from '../dev-server';
import type { ServerBinaries } from './server-build';
import type { Postgres } from './postgres';

const PLUGIN = 'postgres12';
const DATABASES = { persistence: 'temporal', visibility: 'temporal_visibility' } as const;
/** The SQL tool's embedded schemas for each database (`--schema-name`). */
const SCHEMAS = { persistence: 'postgresql/v12/temporal', visibility: 'postgresql/v12/visibility' } as const;

/** Creates both databases and brings their schemas to the server's version, as Temporal's admin-tools image does. */
export function setupSchema(bin: ServerBinaries, pg: Postgres, log: (line: string) => void): void {
  for (const kind of ['persistence', 'visibility'] as const) {
    const db = DATABASES[kind];
    const base = ['--plugin', PLUGIN, '--ep', pg.host, '-p', String(pg.port), '-u', pg.user, '--pw', 'unused-trust-auth', '--db', db];
    sqlTool(bin, [...base, 'create-database']);
    sqlTool(bin, [...base, 'setup-schema', '-v', '0.0']);
    sqlTool(bin, [...base, 'update-schema', '--schema-name', SCHEMAS[kind]]);
    log(`schema of ${db} set up with temporal-sql-tool (${SCHEMAS[kind]})`);
  }
}

function sqlTool(bin: ServerBinaries, args: string[]): void {
  const res = spawnSync(bin.sqlTool, args, { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`temporal-sql-tool ${args.slice(-3).join(' ')} failed (exit ${res.status}): ${(res.stderr || res.stdout).slice(-2000)}`);
}

export interface ClusterServer {
  address: string;
  version: string;
  /** Stops the server (SIGTERM to its process group) and starts it again on the same ports and database. */
  restart(): Promise<void>;
  /** SIGKILL to its process group (a crash: nothing flushed, no graceful handover), then starts it again. */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Writes the config into `dir` and starts the server; every port is a free one on 127.0.0.1.
 * `dynamicConfig`: a run's own values on top of ours (cluster-deploy's drainage intervals).
 */
export async function startClusterServer(opts: { bin: ServerBinaries; pg: Postgres; dir: string; dynamicConfig?: Record<string, string> }): Promise<ClusterServer> {
  const ports = {
    frontend: await freePort(),
    frontendHttp: await freePort(),
    history: await freePort(),
    matching: await freePort(),
    worker: await freePort(),
    membership: [await lowFreePort(), await lowFreePort(), await lowFreePort(), await lowFreePort()],
  };
  const configDir = join(opts.dir, 'temporal-config');
  mkdirSync(configDir, { recursive: true });
  const dynamicConfig = join(configDir, 'dynamic.yaml');
  writeFileSync(dynamicConfig, dynamicConfigYaml(opts.dynamicConfig));
  writeFileSync(join(configDir, 'smoke.yaml'), serverConfigYaml(opts.pg, ports, dynamicConfig));
  const address = `127.0.0.1:${ports.frontend}`;
  const logFile = join(opts.dir, 'temporal-server.log');

  let running: { child: ChildProcess; exited: Promise<number | null> } | undefined;
  const start = async () => {
    const out = openSync(logFile, 'a');
    const args = ['--root', opts.dir, '--config', 'temporal-config', '--env', 'smoke', '--allow-no-auth', 'start'];
    const child = spawn(opts.bin.server, args, { detached: true, stdio: ['ignore', out, out] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    running = { child, exited };
    await waitUntilServing(address, exited, 120_000).catch((err: Error) => {
      throw new Error(`${err.message} (log: ${logFile})`);
    });
  };
  const stop = async () => {
    if (running) await stopProcessGroup(running.child, running.exited);
    running = undefined;
  };
  const crash = async () => {
    if (running) {
      try {
        process.kill(-running.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await running.exited;
    }
    running = undefined;
    await start();
  };
  await start();
  return { address, version: opts.bin.version, stop, restart: async () => (await stop(), await start()), crash };
}

/**
 * A free port below 32768: the SQL schema stores membership ports as smallint, and the kernel's
 * ephemeral ports (what port 0 gives) lie above it on Linux.
 */
async function lowFreePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

interface Ports {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: number[];
}

function serverConfigYaml(pg: Postgres, p: Ports, dynamicConfig: string): string {
  const datastore = (db: string, maxConns: number) => `
      sql:
        pluginName: "${PLUGIN}"
        databaseName: "${db}"
        connectAddr: "${pg.host}:${pg.port}"
        connectProtocol: "tcp"
        user: "${pg.user}"
        password: "unused-trust-auth"
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: "1h"`;
  const service = (grpc: number, membership: number, http?: number) => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${http ? `\n      httpPort: ${http}` : ''}`;
  return `# Written by tools/cluster/temporal-server.ts for one cluster smoke run.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:${datastore(DATABASES.persistence, 20)}
    postgres-visibility:${datastore(DATABASES.visibility, 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
services:
  frontend:${service(p.frontend, p.membership[0], p.frontendHttp)}
  history:${service(p.history, p.membership[1])}
  matching:${service(p.matching, p.membership[2])}
  worker:${service(p.worker, p.membership[3])}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${p.frontend}"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "${dynamicConfig}"
  pollInterval: "10s"
`;
}

/** What our flows use beyond the server's defaults (updates, update-with-start), and the dev server's partitions. */
function dynamicConfigYaml(extra: Record<string, string> = {}): string {
  const values: Record<string, string | boolean> = {
    'frontend.enableUpdateWorkflowExecution': true,
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
    'frontend.enableExecuteMultiOperation': true,
    // Search attributes registered a moment ago are usable at once (the dev server does the same).
    'system.forceSearchAttributesCacheRefreshOnRead': true,
    ...DEV_DYNAMIC_CONFIG,
    ...extra,
  };
  return Object.entries(values)
    .map(([key, value]) => `${key}:\n  - value: ${typeof value === 'boolean' || /^(\d+|true|false)$/.test(value) ? value : JSON.stringify(value)}\n`)
    .join('');
}
