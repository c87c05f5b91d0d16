/**
 * The cluster the smoke run and the soak share: the Temporal server built from its Go module on a
 * private PostgreSQL, a non-default namespace with our search attributes, the provider sandbox
 * spreading webhooks across the bridges, N worker and M bridge processes, and the typed client.
 * Everything started is registered in `stoppers` and stopped in reverse order by `stopAll`.
 */
import { chmodSync, mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, ServiceError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { newPinKeyPair } from '../../src/codec/card-secrets';
import { newCardActionKeyPair } from '../../src/codec/card-capability';
import { loadConfig, loadConfigOrExit, type Config } from '../../src/config';
import { startSandbox } from '../../src/sandbox';
import { SandboxControlClient, type SandboxConfigPatch } from '../../src/sandbox/control-client';
import type { CardIssuingClient } from '../../src/client';
import { createCardIssuingClient } from '../../src/starter/connect';
import { buildWorkflowBundle } from '../../src/fleet/bundle';
import { freePort } from '../../src/ports';
import { prepareNamespace } from './namespace';
import { CALLERS_NAMESPACE, DEFAULT_NEXUS_ENDPOINT, callerEndpoints, ensureNexusEndpoints, type NexusEndpointTarget } from '../../src/temporal/nexus-endpoint';
import { NEXUS_OPERATIONS } from '../../src/client/nexus-contract';
import { msToTs } from '@temporalio/common/lib/time';
import { startPostgres } from './postgres';
import { spawnApp, type AppProcess } from '../processes';
import { ensureTemporalServer } from './server-build';
import { setupSchema, startClusterServer, type ClusterServer } from './temporal-server';

export interface ClusterOptions {
  name: string;
  namespace: string;
  workers: number;
  bridges: number;
  sandbox: SandboxConfigPatch;
  /** Extra environment of the workers and bridges (e.g. PROVIDER_RATE_WINDOW_MS). */
  env?: Record<string, string>;
  /** Extra environment of the `workers` started here only (cluster-deploy: their build ID), and their names' prefix (default `worker`). */
  workerEnv?: Record<string, string>;
  workerPrefix?: string;
  /** The Temporal server's dynamic config on top of temporal-server.ts's own. */
  dynamicConfig?: Record<string, string>;
  say(line: string): void;
}

/** A process the run may kill and start again on the same port and environment. */
export interface Restartable {
  name: string;
  readonly process: AppProcess;
  url?: string;
  kill(): Promise<void>;
  start(): Promise<void>;
}

export interface Cluster {
  dir: string;
  /** What every worker and bridge process is started with (startWorkers adds its own on top). */
  env: Record<string, string>;
  server: ClusterServer;
  control: SandboxControlClient;
  config: Config;
  client: CardIssuingClient;
  workers: Restartable[];
  bridges: Restartable[];
}

/** Stopped in reverse order of starting, whatever happens. */
export const stoppers: Array<() => Promise<unknown>> = [];

/** The endpoints of README "Calling from another namespace" (one per caller of NEXUS_CALLERS), made as the chart's Job makes them, and the callers' namespace. */
async function nexusEndpointsFor(address: string, config: Config): Promise<NexusEndpointTarget[]> {
  const targets = callerEndpoints(DEFAULT_NEXUS_ENDPOINT, config.temporal.namespace, config.temporal.taskQueue, config.nexus.callers);
  const connection = await Connection.connect({ address });
  try {
    await ensureNexusEndpoints(connection, targets);
    // And a namespace of its own for a caller to run in, as the dev server has.
    const exists = await connection.workflowService.describeNamespace({ namespace: CALLERS_NAMESPACE }).then(() => true, () => false);
    if (!exists) await connection.workflowService.registerNamespace({ namespace: CALLERS_NAMESPACE, description: 'Nexus callers (README, "Calling from another namespace")', workflowExecutionRetentionPeriod: msToTs('1 day') });
    return targets;
  } finally {
    await connection.close();
  }
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const { say } = opts;
  const base = loadConfigOrExit();
  const dir = mkdtempSync(join(tmpdir(), `${opts.name}-`));
  chmodSync(dir, 0o755); // PostgreSQL runs as its own user below it
  say(`run directory (logs of every process): ${dir}`);

  const [bin, bundlePath] = await Promise.all([ensureTemporalServer(say), buildWorkflowBundle(join(dir, 'workflow-bundle.js'))]);
  const pg = await startPostgres({ dir: join(dir, 'postgres'), port: await freePort(), log: say });
  stoppers.push(() => pg.stop());
  say(`PostgreSQL: ${pg.version}, on ${pg.host}:${pg.port}`);
  setupSchema(bin, pg, say);
  const server = await startClusterServer({ bin, pg, dir, dynamicConfig: opts.dynamicConfig });
  stoppers.push(() => server.stop());
  say(`Temporal server ${await serverVersion(server.address)} (go.temporal.io/server ${bin.version}, built from its Go module) on ${server.address}: persistence and SQL visibility in PostgreSQL`);
  const attributes = await prepareNamespace(server.address, opts.namespace);
  say(`namespace ${opts.namespace} registered; search attributes ${attributes.join(', ')} (Keyword) added through the operator API`);

  const sandbox = await startSandbox({ port: 0, apiKey: base.provider.apiKey, apiSecret: base.provider.apiSecret, webhookSecret: base.provider.webhookSecret });
  stoppers.push(() => sandbox.close());
  const cardActions = newCardActionKeyPair();
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: opts.namespace,
    TEMPORAL_TASK_QUEUE: base.temporal.taskQueue,
    TEMPORAL_TLS: '',
    TEMPORAL_API_KEY: '',
    TEMPORAL_TLS_CERT_PATH: '',
    TEMPORAL_TLS_KEY_PATH: '',
    PROVIDER_BASE_URL: sandbox.url,
    PROVIDER_API_KEY: base.provider.apiKey,
    PROVIDER_API_SECRET: base.provider.apiSecret,
    PROVIDER_WEBHOOK_SECRET: base.provider.webhookSecret,
    PAYLOAD_CODEC_KEY: randomBytes(32).toString('base64'),
    PAYLOAD_CODEC_KEY_ID: opts.name,
    PIN_SEAL_PRIVATE_KEY: newPinKeyPair().privateKey,
    // Issue 50's keys: the bridge and workers refuse to start outside development without them.
    SIGNAL_MAC_KEY: randomBytes(32).toString('base64'),
    SIGNAL_MAC_KEY_ID: opts.name,
    CARD_ACTION_SIGNING_KEY: cardActions.privateKey,
    CARD_ACTION_KEY_ID: opts.name,
    CARD_ACTION_TRUSTED_KEYS: `${opts.name}:${cardActions.publicKey}`,
    WORKFLOW_BUNDLE_PATH: bundlePath,
    METRICS_PORT: '',
    LISTEN_HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // One Nexus caller, in the callers' namespace, allowed every operation (docs/nexus.md, "Who can call"): its endpoint is card-issuing-callers.
    NEXUS_CALLERS: JSON.stringify([{ name: CALLERS_NAMESPACE, namespace: CALLERS_NAMESPACE, operations: NEXUS_OPERATIONS }]),
    ...opts.env,
  };
  const config = loadConfig(env);
  await nexusEndpointsFor(server.address, config).then(
    (endpoints) => endpoints.forEach((endpoint) => say(`Nexus endpoint ${endpoint.name} routes to ${endpoint.namespace}/${endpoint.taskQueue} (service cardIssuing, caller ${endpoint.caller?.name}; docs/nexus.md); callers may run in namespace ${CALLERS_NAMESPACE}`)),
    (err: unknown) => say(`Nexus endpoint not made (${(err as Error).message}): the server's operator API refused it`),
  );

  const bridges = await Promise.all(range(opts.bridges).map(async (n) => startBridge(n, env, dir)));
  const control = new SandboxControlClient(sandbox.url);
  await control.configure({ ...opts.sandbox, webhookUrls: bridges.map((b) => `${b.url}/webhooks/provider`) });
  say(`provider sandbox on ${sandbox.url}, webhooks spread round-robin across ${bridges.map((b) => b.url).join(' and ')}`);
  const workers = await startWorkers({ dir, env, server, config }, opts.workerPrefix ?? 'worker', opts.workers, opts.workerEnv);
  say(`${bridges.length} bridges (pids ${bridges.map((b) => b.process.pid).join(', ')}) and ${workers.length} workers (pids ${workers.map((w) => w.process.pid).join(', ')}) polling ${config.temporal.taskQueue}, each loading the prebuilt workflow bundle`);

  const client = await createCardIssuingClient(config);
  stoppers.push(() => client.close());
  return { dir, env, server, control, config, client, workers, bridges };
}

/**
 * `count` more worker processes named `prefix-N`, with the cluster's environment and `extra` on
 * top (another build: its build ID, its bundle); resolves once each polls the main task queue.
 */
export async function startWorkers(cluster: Pick<Cluster, 'dir' | 'env' | 'server' | 'config'>, prefix: string, count: number, extra: Record<string, string> = {}): Promise<Restartable[]> {
  const env = { ...cluster.env, ...extra };
  const workers = range(count).map((n) => `${prefix}-${n}`).map((name) => restartable(name, () => spawnApp(name, 'src/worker.ts', env, join(cluster.dir, `${name}.log`))));
  await Promise.all(workers.map((w) => w.start()));
  await waitForPollers(cluster.server.address, cluster.config.temporal.namespace, cluster.config.temporal.taskQueue, workers.map((w) => w.process));
  return workers;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** A process registered for stopping once, whichever incarnation is running then; `ready` awaited after each start. */
function restartable(name: string, spawn: () => AppProcess, url?: string, ready?: () => Promise<void>): Restartable {
  let current: AppProcess | undefined;
  stoppers.push(async () => current?.stop());
  return {
    name,
    url,
    get process() {
      return current!;
    },
    kill: async () => current?.kill(),
    start: async () => {
      current = spawn();
      await ready?.();
    },
  };
}

async function startBridge(n: number, env: Record<string, string>, dir: string): Promise<Restartable> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const spawn = () => spawnApp(`bridge-${n}`, 'src/bridge/server.ts', { ...env, BRIDGE_PORT: String(port) }, join(dir, `bridge-${n}.log`));
  const answering = () => until(`bridge-${n} answering /health`, async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok === true, 60_000);
  const bridge = restartable(`bridge-${n}`, spawn, url, answering);
  await bridge.start();
  return bridge;
}

export async function serverVersion(address: string): Promise<string> {
  const connection = await Connection.connect({ address });
  try {
    return (await connection.workflowService.getSystemInfo({})).serverVersion || 'unknown';
  } finally {
    await connection.close();
  }
}

/** Every worker's pid among the main queue's pollers (the SDK's identity is pid@host). */
export async function waitForPollers(address: string, namespace: string, taskQueue: string, workers: AppProcess[], timeoutMs = 180_000): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    await until(`${workers.length} workers polling`, async () => {
      for (const w of workers) if (w.exited()) throw new Error(`${w.name} exited at start`);
      const { pollers } = await connection.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      const ids = (pollers ?? []).map((p) => p.identity ?? '');
      return workers.every((w) => ids.some((id) => id.startsWith(`${w.pid}@`)));
    }, timeoutMs);
  } finally {
    await connection.close();
  }
}

/** Webhook deliveries: how many were delivered, and how many attempts found no bridge. */
export async function deliverySummary(control: SandboxControlClient): Promise<{ total: number; delivered: number; pending: number; noBridge: number; notDelivered: string[] }> {
  const deliveries = await control.webhooks();
  return {
    total: deliveries.length,
    delivered: deliveries.filter((d) => d.status === 'DELIVERED').length,
    pending: deliveries.filter((d) => d.status === 'PENDING').length,
    noBridge: deliveries.flatMap((d) => d.attempts).filter((a) => a.statusCode === null).length,
    notDelivered: deliveries.filter((d) => d.status === 'FAILED' || d.status === 'DROPPED').map((d) => `${d.eventType} ${d.eventId} ${d.status}`),
  };
}

export async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
      if ((err as Error).message.includes('exited at start')) throw err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (${(last as Error).message})` : ''}`);
    await pause(300);
  }
}

/** A gRPC failure that says Temporal was away (the server restarting), not what the call asked. */
export function isTransient(err: unknown): boolean {
  return err instanceof ServiceError || [1, 4, 14].includes((err as { code?: number }).code ?? -1);
}

/**
 * A call asked again while the failure is only Temporal being away: the SDK's own retries give up
 * after a few seconds; a flow's outcome is final only when the flow says so.
 */
export async function outlastingOutages<R>(call: () => Promise<R>, timeoutMs = 180_000): Promise<R> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (!isTransient(err) || Date.now() > deadline) throw err;
      await pause(1000);
    }
  }
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function stopAll(say: (line: string) => void): Promise<void> {
  for (const stop of stoppers.reverse()) await stop().catch((err: unknown) => say(`while stopping: ${(err as Error).message}`));
  stoppers.length = 0;
}

/** Runs `main`, stops everything it started (also on SIGINT/SIGTERM and on failure), exits with its code. */
export function runToExit(main: () => Promise<number>, say: (line: string) => void): void {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      say(`${signal}: stopping everything`);
      void stopAll(say).then(() => process.exit(130));
    });
  }
  // A rejection nobody awaited would end the process at once, leaving every process it started running.
  process.on('unhandledRejection', (err) => {
    if (interrupted) return;
    interrupted = true;
    say(`FAILED (a rejection nobody awaited): ${(err as Error)?.stack ?? String(err)}`);
    void stopAll(say).then(() => process.exit(1));
  });
  void main()
    .catch((err: unknown) => {
      say(`FAILED: ${(err as Error).stack ?? String(err)}`);
      return 1;
    })
    .then(async (code) => {
      if (!interrupted) await stopAll(say);
      say('stopped everything it started');
      process.exit(code);
    });
}
