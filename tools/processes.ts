/**
 * Our own entry points (src/worker.ts, src/bridge/server.ts) as separate processes, each in a
 * process group of its own so that a kill ends everything it started. Node runs the TypeScript
 * with tsx as a loader (no npm wrapper), so the group leader is the program itself.
 */
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

export interface AppProcess {
  name: string;
  pid: number;
  /** SIGKILL to the whole process group; resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (graceful), SIGKILL after 15 s. */
  stop(): Promise<void>;
  exited(): boolean;
}

export function spawnApp(name: string, entry: 'src/worker.ts' | 'src/bridge/server.ts', env: Record<string, string>, logFile: string): AppProcess {
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, entry)], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', out, out],
    env: { ...process.env, ...env },
  });
  const pid = child.pid!;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s);
    } catch {
      // already gone
    }
  };
  return {
    name,
    pid,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    async kill() {
      signal('SIGKILL');
      await exit;
      if (isAlive(pid)) throw new Error(`${name} (pid ${pid}) survived SIGKILL`);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), 15_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
