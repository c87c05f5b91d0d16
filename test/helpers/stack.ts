/**
 * A whole system per test on the run's real Temporal dev server: the provider sandbox over real
 * HTTP, the webhook bridge, and the workers on a task queue of the test's own.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, type Config } from '../../src/config';
import { createDataConverter } from '../../src/codec/payload-codec';
import { startBridge, type RunningBridge } from '../../src/bridge';
import { startSandbox } from '../../src/sandbox';
import { createWorkers, type WorkerFleet } from '../../src/temporal/workers';
import { connectionOptions } from '../../src/temporal/connection';

export const TEST_CODEC_KEY = randomBytes(32).toString('base64');

// Workers log their state changes at INFO; tests keep only warnings. Once per process.
let runtimeInstalled = false;
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // already installed by an earlier test file in this process
  }
}

export interface Stack {
  config: Config;
  taskQueue: string;
  client: Client;
  sandboxUrl: string;
  bridge: RunningBridge;
  /** Calls the sandbox control API (CONTRACTS §5); resolves the JSON answer. */
  control<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  startWorkers(): Promise<WorkerFleet>;
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

export function temporalAddress(): string {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEST_TEMPORAL_ADDRESS is not set: run through jest (test/global-setup.ts starts the server)');
  return address;
}

export async function startStack(sandboxConfig: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Stack> {
  quietRuntime();
  const taskQueue = `test-${randomUUID()}`;
  const sandbox = await startSandbox({ port: 0 });
  const config = loadConfig({
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_TASK_QUEUE: taskQueue,
    PROVIDER_BASE_URL: sandbox.url,
    PAYLOAD_CODEC_KEY: TEST_CODEC_KEY,
    PAYLOAD_CODEC_KEY_ID: 'test',
    PROVIDER_TIMEOUT_MS: '5000',
    ...env,
  });
  const bridge = await startBridge(config, { port: 0 });
  const control = sandboxControl(sandbox.url);
  await control('PUT', '/config', { webhookUrl: `${bridge.url}/webhooks/provider`, ...sandboxConfig });
  const connection = await Connection.connect(connectionOptions(config.temporal));
  const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec) });

  let fleet: WorkerFleet | undefined;
  let running: Promise<void> | undefined;
  const stopWorkers = async () => {
    fleet?.shutdown();
    await running?.catch(() => undefined);
    fleet = undefined;
    running = undefined;
  };
  const startWorkers = async () => {
    fleet = await createWorkers({ config, taskQueue, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, enforceRateBudget: false });
    running = fleet.run();
    return fleet;
  };
  await startWorkers();
  return {
    config,
    taskQueue,
    client,
    sandboxUrl: sandbox.url,
    bridge,
    control,
    startWorkers,
    stopWorkers,
    close: async () => {
      await stopWorkers();
      await bridge.close();
      await connection.close();
      await sandbox.close();
    },
  };
}

/** Fast waits for tests: webhooks get a short window before the flow falls back to polling. */
export const FAST_TIMINGS = { webhookWaitMs: 3000, pollInitialIntervalMs: 200, pollMaxIntervalMs: 1000, deadlineMs: 60000 };

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

export type SandboxControl = <T = any>(method: string, path: string, body?: unknown) => Promise<T>;

/** Calls the sandbox control API (CONTRACTS §5) at `sandboxUrl`; resolves the JSON answer, throws on a non-2xx. */
export function sandboxControl(sandboxUrl: string): SandboxControl {
  return async <T = any>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${sandboxUrl}/sandbox${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`sandbox control ${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return json as T;
  };
}
