/**
 * The local stack for a bench run, wired as `npm run demo` wires it: a Temporal dev server (in
 * memory), the provider sandbox and the webhook bridge in this process; workers in child
 * processes (one per measure and side), each configured through the environment.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../src/config';
import { createDataConverter } from '../src/codec/payload-codec';
import { startSandbox, type RunningSandbox } from '../src/sandbox';
import { ensureTemporalCli } from '../src/temporal/cli';
import { freePort, startDevServer, type DevServer, type DevServerOptions } from '../src/temporal/dev-server';
import { connectionOptions } from '../src/temporal/connection';
import { control, log, until } from './lib';
import type { MemoryReport } from './worker-process';

const CODEC_KEY = randomBytes(32).toString('base64');

export interface BenchStack {
  server: DevServer;
  sandbox: RunningSandbox;
  /** The environment (CONTRACTS §2) of a process on `taskQueue`. */
  env(taskQueue: string, extra?: Record<string, string>): Record<string, string>;
  config(taskQueue: string, extra?: Record<string, string>): Config;
  client(): Client;
  control<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** A bridge process (`npm run bridge`) delivering to `taskQueue`; the sandbox's webhooks go to it. */
  bridge(taskQueue: string): Promise<{ url: string }>;
  worker(mode: WorkerMode, taskQueue: string, extra?: Record<string, string>): Promise<WorkerProcess>;
  close(): Promise<void>;
}

export type WorkerMode = 'fleet' | 'bare' | 'bare-schemas' | 'bare-project';

export interface WorkerProcess {
  memory(): Promise<MemoryReport>;
  stop(): Promise<void>;
}

export function uniqueQueue(name: string): string {
  return `bench-${name}-${randomUUID().slice(0, 8)}`;
}

export async function startBenchStack(serverOptions: Partial<DevServerOptions> = {}): Promise<BenchStack> {
  const base = loadConfig({});
  const cliPath = await ensureTemporalCli(base.temporal.cliPath, log);
  const server = await startDevServer({ cliPath, headless: true, ...serverOptions });
  const sandbox = await startSandbox({ port: 0 });
  const stoppers: Array<() => Promise<unknown>> = [() => sandbox.close(), () => server.stop()];
  const env = (taskQueue: string, extra: Record<string, string> = {}) => ({
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    PROVIDER_BASE_URL: sandbox.url,
    PAYLOAD_CODEC_KEY: CODEC_KEY,
    PAYLOAD_CODEC_KEY_ID: 'bench',
    LOG_LEVEL: 'error',
    ...extra,
  });
  const config = (taskQueue: string, extra?: Record<string, string>) => loadConfig(env(taskQueue, extra));
  const connection = await Connection.connect(connectionOptions(config('bench').temporal));
  stoppers.unshift(() => connection.close());
  const client = new Client({ connection, namespace: base.temporal.namespace, dataConverter: createDataConverter(config('bench').codec) });
  let bridge: BridgeProcess | undefined;

  return {
    server,
    sandbox,
    env,
    config,
    client: () => client,
    control: (method, path, body) => control(sandbox.url, method, path, body),
    bridge: async (taskQueue) => {
      await bridge?.stop();
      // A process of its own, as deployed: the bench's load and the sandbox do not share its event loop.
      bridge = await forkBridge({ ...process.env, ...env(taskQueue, { BRIDGE_PORT: String(await freePort()) }) });
      await control(sandbox.url, 'PUT', '/config', { webhookUrl: `${bridge.url}/webhooks/provider` });
      return bridge;
    },
    worker: (mode, taskQueue, extra) => forkWorker(mode, { ...process.env, ...env(taskQueue, extra) }, stoppers),
    close: async () => {
      await bridge?.stop().catch(() => undefined);
      for (const stop of stoppers) await stop().catch((err: unknown) => log(`while stopping: ${(err as Error).message}`));
    },
  };
}

async function forkWorker(mode: WorkerMode, env: NodeJS.ProcessEnv, stoppers: Array<() => Promise<unknown>>): Promise<WorkerProcess> {
  const child: ChildProcess = fork(require.resolve('./worker-process'), [], {
    env: { ...env, BENCH_WORKER_MODE: mode },
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = (type: string) =>
    new Promise<{ memory: MemoryReport }>((resolve, reject) => {
      const onMessage = (msg: { type: string; memory: MemoryReport }) => {
        if (msg.type !== type) return;
        child.off('message', onMessage);
        resolve(msg);
      };
      child.on('message', onMessage);
      void exited.then(() => reject(new Error(`bench worker (${mode}) exited`)));
    });
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.send({ type: 'stop' });
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(killer);
  };
  stoppers.unshift(stop);
  await next('ready');
  return {
    memory: async () => {
      const reply = next('memory');
      child.send({ type: 'memory' });
      return (await reply).memory;
    },
    stop,
  };
}

interface BridgeProcess {
  url: string;
  stop(): Promise<void>;
}

async function forkBridge(env: NodeJS.ProcessEnv): Promise<BridgeProcess> {
  const child = fork(require.resolve('../src/bridge/server'), [], { env, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${env.BRIDGE_PORT}`;
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  try {
    await until('bridge listening', async () => ((await fetch(`${url}/health`).then((r) => r.ok, () => false)) ? true : undefined), 30_000, 200);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}
