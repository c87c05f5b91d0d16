/**
 * The machine-wide cache for what the project provisions itself (the Temporal CLI, the Java test
 * server): outside the clone, so a fresh clone on the same machine reuses it.
 */
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

const LOCK_STALE_MS = 30 * 60 * 1000;

export function cacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'card-issuing');
}

/** Serialises concurrent provisioning (parallel test runs, a demo and a test) with an atomic mkdir. */
export async function withDirLock<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(lockDir), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lockDir).mtimeMs > LOCK_STALE_MS) rmSync(lockDir, { recursive: true, force: true });
        else await new Promise((r) => setTimeout(r, 1000));
      } catch {
        // the lock went away between mkdir and stat: try again
      }
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

export function isExecutable(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile() && (statSync(path).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH, if any. */
export function findOnPath(name: string): string | undefined {
  return (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name)).find(isExecutable);
}

export function stderrLine(line: string): void {
  process.stderr.write(`${line}\n`);
}
