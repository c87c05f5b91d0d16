/**
 * Building packages/client from the tests: api-report.test.ts and consumer.test.ts both rebuild its
 * dist/ (a clean build: the folder is removed first), and jest runs test files in parallel, so each
 * holds a lock from its build until it has read or packed what it needs.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const REPO_ROOT = resolve(__dirname, '../..');
export const PACKAGE_DIR = join(REPO_ROOT, 'packages/client');

export interface Run {
  code: number;
  /** stdout and stderr, for a failure's message. */
  output: string;
  stdout: string;
  ms: number;
}

/** Runs `npm <args>` in `cwd`; resolves with its exit code and output (never rejects on a non-zero exit). */
export function npm(args: string[], cwd = REPO_ROOT, timeoutMs = 180_000): Promise<Run> {
  const started = Date.now();
  return new Promise((done) => {
    execFile('npm', args, { cwd, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      done({ code, output: `${stdout}${stderr}`.replace(/\x1b\[[0-9;]*m/g, '').trim(), stdout, ms: Date.now() - started });
    });
  });
}

const LOCK = join(tmpdir(), `card-issuing-client-build-${createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12)}.lock`);

/** Runs `fn` while no other test process builds or reads packages/client/dist (a lock left by a dead process is taken over). */
export async function withPackageBuildLock<T>(fn: () => Promise<T>, waitMs = 300_000): Promise<T> {
  for (const deadline = Date.now() + waitMs; ; ) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!holderAlive()) rmSync(LOCK, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`packages/client is still being built by another test process (lock ${LOCK})`);
      else await sleep(250);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

function holderAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    // Just created (its pid is being written), unless its holder died in between.
    try {
      return Date.now() - statSync(LOCK).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
