/**
 * tools/temporal-authz: Temporal's server (go.temporal.io/server v1.29.1, the one the CLI v1.5.1 embeds)
 * with an authorizer of ours that gives each process only its calls (the bridge: signal entity
 * workflows, nothing else; see main.go). Built with `go build` once per machine into the cache
 * outside the clone (~/.cache/card-issuing/temporal-authz/<server version>-<source hash>/), the way
 * tools/compose.ts builds compose-config, and started here for test/deploy/temporal-authz.test.ts.
 * Its go.mod requires exactly the module versions of the Temporal CLI's build, so after the CLI's
 * build (npm test's provisioning does it first) Go's build cache holds nearly all of it.
 * Measured here (2 shared cores, load average 8 to 15 from other test runs): 14 to 26 s wall, 7 s of
 * CPU, with Go's build cache warm from the CLI's build (linking is most of it); with an empty build
 * cache (modules downloaded), 444 s of CPU: 19 min 36 s wall nice'd beside other builds, so some
 * 4 min on two idle cores.
 *
 *   npx tsx tools/temporal-authz.ts      # builds it now (npm test's provisioning does too when Go is there)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { freePort } from '../src/ports';
import { cacheRoot, isExecutable, stderrLine, withDirLock } from './cache';
import { DEV_DYNAMIC_CONFIG, stopProcessGroup, waitUntilServing } from './dev-server';
import { checkGo, runGo, TemporalCliUnavailable } from './temporal-cli';
import { prepareNamespace } from './cluster/namespace';

export const TEMPORAL_AUTHZ_SOURCE = join(__dirname, 'temporal-authz');
const SOURCE_FILES = ['go.mod', 'go.sum', 'main.go'];
/** go.mod says `go 1.25.0`, as the CLI's does. */
const MIN_GO = [1, 25] as const;

/** The go.temporal.io/server version tools/temporal-authz/go.mod requires. */
export function authzServerVersion(): string {
  const m = /^\s*go\.temporal\.io\/server (v\S+)\s*$/m.exec(readFileSync(join(TEMPORAL_AUTHZ_SOURCE, 'go.mod'), 'utf8'));
  if (!m) throw new TemporalCliUnavailable('tools/temporal-authz/go.mod does not require go.temporal.io/server');
  return m[1];
}

/** The cache folder of this source: an edit of main.go or go.mod builds anew instead of reusing an old binary. */
export function temporalAuthzCacheDir(): string {
  const hash = createHash('sha256');
  for (const name of SOURCE_FILES) hash.update(`${name}\0`).update(readFileSync(join(TEMPORAL_AUTHZ_SOURCE, name)));
  return join(cacheRoot(), 'temporal-authz', `${authzServerVersion()}-${hash.digest('hex').slice(0, 12)}`);
}

const cachedBinary = () => join(temporalAuthzCacheDir(), 'temporal-authz');

/** The built server, or undefined when it would have to be built. */
export function findTemporalAuthz(): string | undefined {
  return isExecutable(cachedBinary()) ? cachedBinary() : undefined;
}

/** Why it can be neither found nor built (no Go, or one too old), or undefined when it can. */
export function temporalAuthzUnavailable(): string | undefined {
  if (findTemporalAuthz()) return undefined;
  try {
    checkGo(`tools/temporal-authz (go.temporal.io/server ${authzServerVersion()})`, MIN_GO);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Finds or builds the server; throws TemporalCliUnavailable (the provisioning error) naming what is missing. */
export async function ensureTemporalAuthz(log: (line: string) => void = stderrLine): Promise<string> {
  const found = findTemporalAuthz();
  if (found) return found;
  const what = `tools/temporal-authz (go.temporal.io/server ${authzServerVersion()})`;
  checkGo(what, MIN_GO);
  const target = cachedBinary();
  return withDirLock(join(temporalAuthzCacheDir(), '.build-lock'), async () => {
    if (!isExecutable(target)) await goBuild(log, target, what);
    if (!isExecutable(target)) throw new TemporalCliUnavailable(`go build finished but ${target} is missing`);
    return target;
  });
}

/**
 * `go build` statically linked, to a temporary name renamed into place once complete. No -trimpath:
 * the CLI's `go install` built without it, and the same flags find its packages in Go's build cache.
 */
async function goBuild(log: (line: string) => void, target: string, what: string): Promise<void> {
  mkdirSync(dirname(target), { recursive: true });
  const partial = `${target}.partial`;
  log(`Building ${what} with go build (under a minute after the Temporal CLI's build, minutes without it; once per machine) into ${target} ...`);
  const { code, tail, seconds } = await runGo(['build', '-v', '-o', partial, '.'], { cwd: TEMPORAL_AUTHZ_SOURCE }, log);
  if (code !== 0) {
    rmSync(partial, { force: true });
    const last = tail.split('\n').map((l) => l.trim()).filter(Boolean).pop() ?? 'no output';
    throw new TemporalCliUnavailable(`go build of tools/temporal-authz failed (exit ${code}): ${last}`);
  }
  renameSync(partial, target);
  log(`${what} built in ${seconds} s`);
}

export interface AuthzServerOptions {
  binary: string;
  /** A fresh directory for its config and log. */
  dir: string;
  /** Where the token keys are: a JWKS over http(s), or file:///path/jwks.json. */
  jwksUri: string;
  /** A token with `temporal-system:admin`, to register the namespaces. */
  adminToken: string;
  /** Registered at start, each with our search attributes. */
  namespaces: string[];
}

export interface AuthzServer {
  /** The frontend clients use (host:port), which checks tokens. */
  address: string;
  logFile: string;
  stop(): Promise<void>;
}

/**
 * Starts the server on free ports of 127.0.0.1 with in-memory SQLite, every service in one process:
 * frontend, internal-frontend (for the server's own workers: no token there, so it binds only to
 * loopback here and belongs behind internode mTLS elsewhere), history, matching, worker.
 */
export async function startAuthzServer(opts: AuthzServerOptions): Promise<AuthzServer> {
  const configDir = join(opts.dir, 'config');
  mkdirSync(configDir, { recursive: true });
  const dynamicConfig = join(configDir, 'dynamic.yaml');
  writeFileSync(dynamicConfig, dynamicConfigYaml());
  const ports = {
    frontend: await freePort(),
    frontendHttp: await freePort(),
    internal: await freePort(),
    internalHttp: await freePort(),
    history: await freePort(),
    matching: await freePort(),
    worker: await freePort(),
  };
  writeFileSync(join(configDir, 'authz.yaml'), serverConfigYaml(ports, await membershipPorts(5), opts.jwksUri, dynamicConfig));
  const address = `127.0.0.1:${ports.frontend}`;
  const logFile = join(opts.dir, 'temporal-authz.log');
  const out = openSync(logFile, 'a');
  // Its own process group (stop() ends it), and its working directory outside the clone.
  const child: ChildProcess = spawn(opts.binary, ['--config-dir', configDir, '--env', 'authz'], { cwd: opts.dir, detached: true, stdio: ['ignore', out, out] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = () => stopProcessGroup(child, exited);
  try {
    await waitUntilServing(address, exited, 120_000);
    for (const namespace of opts.namespaces) await prepareNamespace(address, namespace, 1, { apiKey: opts.adminToken });
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message} (log: ${logFile})`);
  }
  return { address, logFile, stop };
}


/** Ringpop's ports: below 32768, as the membership table stores them as smallint (tools/cluster/temporal-server.ts). */
async function membershipPorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) ports.add(port);
  }
  return [...ports];
}

interface Ports {
  frontend: number;
  frontendHttp: number;
  internal: number;
  internalHttp: number;
  history: number;
  matching: number;
  worker: number;
}

/** Temporal's own config format (config/development-sqlite.yaml of the server), plus `global.authorization`. */
function serverConfigYaml(p: Ports, membership: number[], jwksUri: string, dynamicConfig: string): string {
  const service = (grpc: number, member: number, http?: number) => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${member}
      bindOnLocalHost: true${http ? `\n      httpPort: ${http}` : ''}`;
  return `# Written by tools/temporal-authz.ts for one run.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: sqlite-default
  visibilityStore: sqlite-default
  numHistoryShards: 1
  datastores:
    sqlite-default:
      sql:
        pluginName: "sqlite"
        databaseName: "authz"
        connectAddr: "localhost"
        connectProtocol: "tcp"
        connectAttributes:
          mode: "memory"
          cache: "private"
        maxConns: 1
        maxIdleConns: 1
        maxConnLifetime: "1h"
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
  authorization:
    jwtKeyProvider:
      keySourceURIs:
        - "${jwksUri}"
      refreshInterval: 1m
    permissionsClaimName: permissions
services:
  frontend:${service(p.frontend, membership[0], p.frontendHttp)}
  internal-frontend:${service(p.internal, membership[1], p.internalHttp)}
  history:${service(p.history, membership[2])}
  matching:${service(p.matching, membership[3])}
  worker:${service(p.worker, membership[4])}
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
      httpAddress: "127.0.0.1:${p.frontendHttp}"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "${dynamicConfig}"
  pollInterval: "10s"
`;
}

/** The cluster's dynamic config (tools/cluster/temporal-server.ts): updates, update-with-start, the dev server's partitions. */
function dynamicConfigYaml(): string {
  const values: Record<string, string | boolean> = {
    'frontend.enableUpdateWorkflowExecution': true,
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
    'frontend.enableExecuteMultiOperation': true,
    'system.forceSearchAttributesCacheRefreshOnRead': true,
    ...DEV_DYNAMIC_CONFIG,
  };
  return Object.entries(values)
    .map(([key, value]) => `${key}:\n  - value: ${typeof value === 'boolean' || /^(\d+|true|false)$/.test(value) ? value : JSON.stringify(value)}\n`)
    .join('');
}

if (require.main === module) {
  ensureTemporalAuthz().then(
    (path) => stderrLine(`temporal-authz: ${path}`),
    (err: Error) => {
      stderrLine(err.message);
      process.exit(1);
    },
  );
}
