/**
 * The local stack for a bench run: a Temporal dev server (in memory) and the provider sandbox in
 * this process, started by tools/local-stack.ts as for `npm run demo`; the webhook bridge and the
 * workers in child processes (one per measure and side), each configured through the environment.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { newPinKeyPair } from '../src/codec/card-secrets';
import { loadConfig, type Config } from '../src/config';
import { freePort } from '../src/ports';
import type { RunningSandbox } from '../src/sandbox';
import type { SandboxControlClient } from '../src/sandbox/control-client';
import type { DevServer, DevServerOptions } from '../tools/dev-server';
import { startLocalStack } from '../tools/local-stack';
import { log, until } from './lib';
import type { MemoryReport, VisibilityCounters } from './worker-process';

const CODEC_KEY = randomBytes(32).toString('base64');
const PIN_KEY = newPinKeyPair().privateKey;

export interface BenchStack {
  server: DevServer;
  sandbox: RunningSandbox;
  /** The environment (CONTRACTS §2) of a process on `taskQueue`. */
  env(taskQueue: string, extra?: Record<string, string>): Record<string, string>;
  config(taskQueue: string, extra?: Record<string, string>): Config;
  client(): Client;
  control: SandboxControlClient;
  /** A bridge process (`npm run bridge`) delivering to `taskQueue`; the sandbox's webhooks go to it. With `metrics`, its /metrics at `opsUrl`. */
  bridge(taskQueue: string, opts?: { metrics?: boolean }): Promise<{ url: string; opsUrl?: string }>;
  worker(mode: WorkerMode, taskQueue: string, extra?: Record<string, string>): Promise<WorkerProcess>;
  close(): Promise<void>;
}

export type WorkerMode = 'fleet' | 'bare' | 'bare-schemas' | 'bare-project';

export interface WorkerProcess {
  memory(): Promise<MemoryReport>;
  /** The fleet's visibility list calls so far (P3's breakdown); zero for a bare worker. */
  counters(): Promise<VisibilityCounters>;
  stop(): Promise<void>;
}

export function uniqueQueue(name: string): string {
  return `bench-${name}-${randomUUID().slice(0, 8)}`;
}

/** The local stack (tools/local-stack.ts) without its bridge and workers: the bench runs those as processes. */
export async function startBenchStack(serverOptions: Partial<DevServerOptions> = {}): Promise<BenchStack> {
  const base = loadConfig({ PAYLOAD_CODEC_KEY: CODEC_KEY, PAYLOAD_CODEC_KEY_ID: 'bench', PIN_SEAL_PRIVATE_KEY: PIN_KEY, TEMPORAL_TASK_QUEUE: 'bench' });
  const local = await startLocalStack({ base, devServer: { headless: true, ...serverOptions }, bridge: false, workers: false, log });
  const server = local.server!;
  const env = (taskQueue: string, extra: Record<string, string> = {}) => ({
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    PROVIDER_BASE_URL: local.sandbox.url,
    PAYLOAD_CODEC_KEY: CODEC_KEY,
    PAYLOAD_CODEC_KEY_ID: 'bench',
    PIN_SEAL_PRIVATE_KEY: PIN_KEY,
    // The sandbox's public secrets stand in (requireSecrets): the bench is a developer's run, never production.
    CARD_ISSUING_DEVELOPMENT: 'true',
    LOG_LEVEL: 'error',
    ...extra,
  });
  const config = (taskQueue: string, extra?: Record<string, string>) => loadConfig(env(taskQueue, extra));
  /** Stopped before the local stack, most recent first. */
  const processes: Array<() => Promise<unknown>> = [];
  let bridge: BridgeProcess | undefined;

  return {
    server,
    sandbox: local.sandbox,
    env,
    config,
    client: () => local.client,
    control: local.control,
    bridge: async (taskQueue, opts = {}) => {
      await bridge?.stop();
      // A process of its own, as deployed: the bench's load and the sandbox do not share its event loop.
      const metrics: Record<string, string> = opts.metrics ? { METRICS_PORT: String(await freePort()) } : {};
      bridge = await forkBridge({ ...process.env, ...env(taskQueue, { BRIDGE_PORT: String(await freePort()), ...metrics }) });
      await local.control.configure({ webhookUrl: `${bridge.url}/webhooks/provider` });
      return bridge;
    },
    worker: (mode, taskQueue, extra) => forkWorker(mode, { ...process.env, ...env(taskQueue, extra) }, processes),
    close: async () => {
      await bridge?.stop().catch(() => undefined);
      for (const stop of processes) await stop().catch((err: unknown) => log(`while stopping: ${(err as Error).message}`));
      await local.close();
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
    new Promise<{ memory: MemoryReport; counters: VisibilityCounters }>((resolve, reject) => {
      const onMessage = (msg: { type: string; memory: MemoryReport; counters: VisibilityCounters }) => {
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
    counters: async () => {
      const reply = next('counters');
      child.send({ type: 'counters' });
      return (await reply).counters;
    },
    stop,
  };
}

interface BridgeProcess {
  url: string;
  opsUrl?: string;
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
  return { url, ...(env.METRICS_PORT ? { opsUrl: `http://127.0.0.1:${env.METRICS_PORT}` } : {}), stop };
}
