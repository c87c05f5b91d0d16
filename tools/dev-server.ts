/**
 * Starts `temporal server start-dev` as a child process: used by `npm run temporal`,
 * the local stack (demo, bench) and the test suite (one server per run).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { clientInterceptors } from '../src/temporal/client-interceptors';
import { freePort } from '../src/ports';
import { SEARCH_ATTRIBUTES } from '../src/shared/search-attributes';
import { prepareNamespace } from './cluster/namespace';
import { CALLERS_NAMESPACE } from '../src/temporal/nexus-endpoint';

export interface DevServerOptions {
  cliPath: string;
  ip?: string;
  /** 0 picks a free port. */
  port?: number;
  uiPort?: number;
  /** Omit for an in-memory server. */
  dbFile?: string;
  namespace?: string;
  headless?: boolean;
  codecEndpoint?: string;
  stdio?: 'inherit' | 'ignore';
  /** SQLite pragmas (`--sqlite-pragma NAME=VALUE`); defaults to DEV_SQLITE_PRAGMAS, {} leaves SQLite's own defaults. */
  sqlitePragmas?: Record<string, string>;
  /**
   * The server stops when this process ends, however it ends (a SIGKILL, a crash, an OOM kill), not only
   * through stop(): the test run's server would otherwise be left to pid 1 by a jest that was killed (stopWithParent).
   */
  stopWithParent?: boolean;
}

/**
 * A write-ahead log with fsync at checkpoints only: several times the throughput of SQLite's
 * rollback journal with a sync per commit on a file-backed server (docs/performance.md). A power
 * loss may lose the last commits of a dev server's state, never corrupt it. In-memory servers
 * keep their memory journal (SQLite ignores WAL there).
 */
/**
 * One partition per task queue: a single-node dev server gains nothing from four, and a
 * rate-limited queue's rate is split across its partitions, so pollers that miss one leave budget unused.
 */
export const DEV_DYNAMIC_CONFIG: Readonly<Record<string, string>> = {
  'matching.numTaskqueueReadPartitions': '1',
  'matching.numTaskqueueWritePartitions': '1',
  // The priority-enabled matcher: reconciliation's reads wait behind every flow's call on a shared queue.
  'matching.useNewMatcher': 'true',
};

export const DEV_SQLITE_PRAGMAS: Readonly<Record<string, string>> = { journal_mode: 'wal', synchronous: 'normal' };

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const port = opts.port || (await freePort(ip));
  const uiPort = opts.headless ? undefined : opts.uiPort || (await freePort(ip));
  // The callers' namespace beside ours: where README's Nexus callers run (docs/nexus.md).
  const namespaces = [...new Set([opts.namespace ?? 'default', CALLERS_NAMESPACE])].flatMap((n) => ['--namespace', n]);
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), ...namespaces, '--log-level', 'error'];
  if (opts.dbFile) {
    mkdirSync(dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  for (const [name, value] of Object.entries(opts.sqlitePragmas ?? DEV_SQLITE_PRAGMAS)) args.push('--sqlite-pragma', `${name}=${value}`);
  for (const [key, value] of Object.entries(DEV_DYNAMIC_CONFIG)) args.push('--dynamic-config-value', `${key}=${value}`);
  if (uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(uiPort), '--ui-ip', ip);
  if (opts.codecEndpoint && uiPort !== undefined) args.push('--ui-codec-endpoint', opts.codecEndpoint);
  for (const [name, kind] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${kind}`);

  // detached: the server gets its own process group, so stop() can end it and whatever it spawned.
  const child = spawn(opts.cliPath, args, { stdio: opts.stdio ?? 'ignore', detached: true });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const address = `${ip}:${port}`;
  const guard = opts.stopWithParent && child.pid !== undefined ? stopWithParent(child.pid) : undefined;
  void exited.then(() => guard?.release());
  await waitUntilServing(address, exited);
  // `--search-attribute` registers on a new database only: one kept from an earlier release gets those it lacks.
  if (opts.dbFile) await prepareNamespace(address, opts.namespace ?? 'default');
  return {
    address,
    uiUrl: uiPort === undefined ? undefined : `http://${ip}:${uiPort}`,
    process: child,
    stop: async () => {
      guard?.release();
      await stopProcessGroup(child, exited);
    },
  };
}

/**
 * A watchdog that ends process group `pgid` when this process ends, however it ends. A `sh` of its own
 * (a process group of its own too, so a terminal's Ctrl-C does not end it first) reads a pipe whose only
 * writing end this process holds (Node opens its pipes close-on-exec, so no child inherits it): the
 * kernel closes that end when this process dies, even by SIGKILL, and the read ends. Then SIGTERM to the
 * group, and SIGKILL after 10 s if it is still there (as stopProcessGroup). Node has no
 * parent-death signal (prctl PR_SET_PDEATHSIG) to give the server, and the server cannot watch us.
 */
export function stopWithParent(pgid: number): { pid: number | undefined; release(): void } {
  const script = [
    'cat >/dev/null',
    'kill -s TERM -- -"$1" 2>/dev/null || exit 0',
    'i=0',
    'while [ $i -lt 20 ] && kill -s 0 -- -"$1" 2>/dev/null; do sleep 0.5; i=$((i+1)); done',
    'kill -s KILL -- -"$1" 2>/dev/null',
    'exit 0',
  ].join('\n');
  const watchdog = spawn('sh', ['-c', script, 'dev-server-watchdog', String(pgid)], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  watchdog.on('error', () => undefined);
  watchdog.stdin!.on('error', () => undefined);
  // Neither the watchdog nor its pipe keeps this process alive.
  watchdog.unref();
  (watchdog.stdin as unknown as { unref(): void }).unref();
  return {
    pid: watchdog.pid,
    // Stopped on purpose (or gone by itself): the watchdog goes first, so it never signals a group id used again.
    release: () => {
      if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill('SIGKILL');
    },
  };
}

export async function waitUntilServing(address: string, exited: Promise<number | null>, timeoutMs = 60000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let stopped: number | null | undefined;
  void exited.then((code) => (stopped = code));
  for (;;) {
    if (stopped !== undefined) throw new Error(`the Temporal server exited with code ${stopped} before serving on ${address}`);
    // lazy + ensureConnected, so an attempt that fails to connect is closed too (connect() would leak its channel).
    const conn = Connection.lazy({ address, connectTimeout: 1000, interceptors: clientInterceptors() });
    try {
      await conn.ensureConnected();
      await conn.workflowService.getSystemInfo({});
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`temporal server did not serve on ${address} within ${timeoutMs} ms: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    } finally {
      await conn.close();
    }
  }
}

/** SIGTERM to the process group, SIGKILL after 10 s; resolves once the leader exited. */
export async function stopProcessGroup(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  signalGroup(child.pid, 'SIGTERM');
  const killTimer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), 10000);
  await exited;
  clearTimeout(killTimer);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** The default port when it is free, otherwise any free one (a running dev setup is left alone). */
export async function preferredPort(port: number, host = '127.0.0.1'): Promise<number> {
  const free = await new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
  return free ? port : freePort(host);
}
