/**
 * A private PostgreSQL from Debian's packages for the cluster smoke: its own data directory and
 * port, trust authentication on 127.0.0.1 only, started and stopped by the run. As root it runs as
 * the `postgres` user (PostgreSQL refuses root); otherwise as the calling user.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopProcessGroup } from '../dev-server';

export interface Postgres {
  host: string;
  port: number;
  user: string;
  /** e.g. "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" */
  version: string;
  stop(): Promise<void>;
}

/** The newest /usr/lib/postgresql/<major>/bin (Debian's layout). */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((d) => existsSync(join(root, d, 'bin', 'initdb'))) : [];
  if (majors.length === 0) throw new Error('PostgreSQL is not installed: apt-get install postgresql (Debian) provides /usr/lib/postgresql/<major>/bin');
  majors.sort((a, b) => Number(b) - Number(a));
  return join(root, majors[0], 'bin');
}

export async function startPostgres(opts: { dir: string; port: number; log: (line: string) => void }): Promise<Postgres> {
  const bin = postgresBinDir();
  const owner = runAs();
  const dataDir = join(opts.dir, 'data');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (owner) {
    chownSync(dataDir, owner.uid, owner.gid);
    chmodSync(opts.dir, 0o755); // the postgres user must reach its data directory inside our run directory
  }
  const user = 'temporal';
  const init = spawnSync(join(bin, 'initdb'), ['-D', dataDir, '-U', user, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    encoding: 'utf8',
    ...owner,
  });
  if (init.status !== 0) throw new Error(`initdb failed (exit ${init.status}): ${init.stderr || init.error?.message}`);

  const logFile = join(opts.dir, 'postgres.log');
  const out = openSync(logFile, 'a');
  if (owner) chownSync(logFile, owner.uid, owner.gid);
  // A throwaway database: durability settings off for speed; a crash of the run loses nothing of value.
  const args = ['-D', dataDir, '-p', String(opts.port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dataDir}`];
  args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200');
  const child = spawn(join(bin, 'postgres'), args, { detached: true, stdio: ['ignore', out, out], ...owner });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const version = spawnSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout.trim();
  await waitUntilReady(bin, opts.port, child, logFile);
  return { host: '127.0.0.1', port: opts.port, user, version, stop: () => fastShutdown(child, exited) };
}

/** As root: the postgres user's ids (spawn's uid/gid options); otherwise nothing to change. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const ids = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = ids('-u');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('running as root and there is no postgres user to run PostgreSQL as');
  return { uid, gid: ids('-g') };
}

async function waitUntilReady(bin: string, port: number, child: ChildProcess, logFile: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited with code ${child.exitCode}: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
    if (spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q']).status === 0) return;
    if (Date.now() > deadline) throw new Error(`postgres did not accept connections on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** SIGINT is PostgreSQL's fast shutdown (SIGTERM would wait for every client to leave). */
async function fastShutdown(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  try {
    process.kill(child.pid, 'SIGINT');
  } catch {
    return;
  }
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000).unref());
  if ((await Promise.race([exited, timeout])) === 'timeout') await stopProcessGroup(child, exited);
}
