/**
 * A worker in a process of its own, for tests that crash it. Node runs src/worker.ts itself
 * (tsx as a loader, no wrapper process) in a process group of its own, so a kill ends every
 * process the worker started, and `kill` returns only once the worker is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Stack } from './stack';

const ROOT = join(__dirname, '..', '..');

export interface WorkerProcess {
  pid: number;
  /** SIGKILL to the whole process group; resolves when the worker has exited and no longer exists. */
  kill(): Promise<void>;
}

export function spawnWorker(stack: Stack): WorkerProcess {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/worker.ts')], {
    cwd: ROOT,
    detached: true,
    stdio: 'ignore',
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: stack.config.temporal.address,
      TEMPORAL_TASK_QUEUE: stack.taskQueue,
      PROVIDER_BASE_URL: stack.config.provider.baseUrl,
      PAYLOAD_CODEC_KEY: stack.config.codec.key,
      PAYLOAD_CODEC_KEY_ID: stack.config.codec.keyId,
    },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid!;
  return {
    pid,
    async kill() {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
      if (isAlive(pid)) throw new Error(`worker process ${pid} survived SIGKILL`);
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
