/**
 * `npm run cluster-smoke` (opt-in, not part of `npm test`): every flow of the demo (tools/flows.ts) on a real
 * Temporal server persisted in PostgreSQL, with two worker processes and two bridge replicas.
 *
 * Builds (once) and starts the server from its Go module, a private PostgreSQL from Debian's
 * packages with the schema set up by temporal-sql-tool, a non-default namespace with our search
 * attributes registered through the operator API, the provider sandbox spreading webhooks across
 * both bridges; then runs the flows through the typed client, SIGKILLs one worker's and one
 * bridge's process group while flows are in flight, restarts the Temporal server once while
 * others are in flight, and checks that every flow ended as asked and the sandbox ledger is clean.
 * Everything it starts it stops, also on failure. Exit 0 only when all of that held.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, ServiceError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { loadConfig, loadConfigOrExit } from '../../src/config';
import { startSandbox } from '../../src/sandbox';
import { SandboxControlClient } from '../../src/sandbox/control-client';
import { createCardIssuingClient } from '../../src/starter';
import type { WaitTimings } from '../../src/shared/types';
import { buildWorkflowBundle } from '../../src/temporal/bundle';
import { freePort } from '../../src/ports';
import { cleanUpFlowRun, flowTable, ledgerVerdict, type FlowRun } from '../flows';
import { prepareNamespace } from './namespace';
import { startPostgres } from './postgres';
import { spawnApp, type AppProcess } from '../processes';
import { ensureTemporalServer } from './server-build';
import { setupSchema, startClusterServer } from './temporal-server';
import { runWaves } from './waves';

const NAMESPACE = 'card-issuing-smoke';
/** Waits long enough that a webhook lost with a killed bridge is redelivered to the other before polling takes over. */
const TIMINGS: WaitTimings = { webhookWaitMs: 15_000, pollInitialIntervalMs: 500, pollMaxIntervalMs: 2000, deadlineMs: 180_000 };
/** Slow enough that flows are still waiting on the provider when a worker, a bridge or the server goes away. */
const SANDBOX_SETTINGS = { cardProvisioningMs: 1500, kycReviewMs: 2500, esimIssueMs: 1000, payoutProcessingMs: 1500, webhook: { retryBaseMs: 500 } };

const say = (line: string) => process.stdout.write(`cluster-smoke: ${line}\n`);
/** Stopped in reverse order of starting, whatever happens. */
const stoppers: Array<() => Promise<unknown>> = [];

async function main(): Promise<number> {
  const base = loadConfigOrExit();
  const dir = mkdtempSync(join(tmpdir(), 'cluster-smoke-'));
  chmodSync(dir, 0o755); // PostgreSQL runs as its own user below it
  say(`run directory (logs of every process): ${dir}`);

  const [bin, bundlePath] = await Promise.all([ensureTemporalServer(say), buildWorkflowBundle(join(dir, 'workflow-bundle.js'))]);
  const pg = await startPostgres({ dir: join(dir, 'postgres'), port: await freePort(), log: say });
  stoppers.push(() => pg.stop());
  say(`PostgreSQL: ${pg.version}, on ${pg.host}:${pg.port}`);
  setupSchema(bin, pg, say);
  const server = await startClusterServer({ bin, pg, dir });
  stoppers.push(() => server.stop());
  say(`Temporal server ${await serverVersion(server.address)} (go.temporal.io/server ${bin.version}, built from its Go module) on ${server.address}: persistence and SQL visibility in PostgreSQL`);
  const attributes = await prepareNamespace(server.address, NAMESPACE);
  say(`namespace ${NAMESPACE} registered; search attributes ${attributes.join(', ')} (Keyword) added through the operator API`);

  const sandbox = await startSandbox({ port: 0, apiKey: base.provider.apiKey, apiSecret: base.provider.apiSecret, webhookSecret: base.provider.webhookSecret });
  stoppers.push(() => sandbox.close());
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: NAMESPACE,
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
    PAYLOAD_CODEC_KEY_ID: 'smoke',
    WORKFLOW_BUNDLE_PATH: bundlePath,
    METRICS_PORT: '',
    LISTEN_HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  };
  const config = loadConfig(env);

  const bridges = await Promise.all([1, 2].map(async (n) => startBridgeProcess(n, env, dir)));
  const workers = [1, 2].map((n) => spawnApp(`worker-${n}`, 'src/worker.ts', env, join(dir, `worker-${n}.log`)));
  for (const p of workers) stoppers.push(() => p.stop());
  const control = new SandboxControlClient(sandbox.url);
  await control.configure({ ...SANDBOX_SETTINGS, webhookUrls: bridges.map((b) => `${b.url}/webhooks/provider`) });
  say(`provider sandbox on ${sandbox.url}, webhooks spread round-robin across ${bridges.map((b) => b.url).join(' and ')}`);
  await waitForPollers(server.address, config.temporal.taskQueue, workers);
  say(`2 bridges (pids ${bridges.map((b) => b.process.pid).join(', ')}) and 2 workers (pids ${workers.map((w) => w.pid).join(', ')}) polling ${config.temporal.taskQueue}, each loading the prebuilt workflow bundle`);

  const client = await createCardIssuingClient(config);
  stoppers.push(() => client.close());
  const run: FlowRun = { client, control, timings: TIMINGS, tag: 'Smoke', log: say, awaitResult: outlastingOutages, made: {} };
  stoppers.push(async () => cleanUpFlowRun(run));
  const rows = await runWaves(run, { server, worker: workers[0], bridge: bridges[0].process }, say);

  process.stdout.write(`\n${flowTable(rows)}\n\n`);
  const allOk = rows.every((r) => r.ok);
  say(allOk ? `every flow completed as asked (${rows.length} of ${rows.length})` : `${rows.filter((r) => !r.ok).length} of ${rows.length} flows did not end as asked`);
  await reportVisibility(server.address);
  await reportDeliveries(control);
  const ledger = await ledgerVerdict(control);
  say(ledger.line);
  const ok = allOk && ledger.ok;
  say(ok ? 'PASSED' : 'FAILED');
  if (ok) rmSync(dir, { recursive: true, force: true });
  else say(`logs kept in ${dir}`);
  return ok ? 0 : 1;
}

async function startBridgeProcess(n: number, env: Record<string, string>, dir: string): Promise<{ url: string; process: AppProcess }> {
  const port = await freePort();
  const child = spawnApp(`bridge-${n}`, 'src/bridge/server.ts', { ...env, BRIDGE_PORT: String(port) }, join(dir, `bridge-${n}.log`));
  stoppers.push(() => child.stop());
  const url = `http://127.0.0.1:${port}`;
  await until(`bridge-${n} answering /health`, async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok === true, 60_000);
  return { url, process: child };
}

// --- Checks ----------------------------------------------------------------------------------

async function serverVersion(address: string): Promise<string> {
  const connection = await Connection.connect({ address });
  try {
    return (await connection.workflowService.getSystemInfo({})).serverVersion || 'unknown';
  } finally {
    await connection.close();
  }
}

/** Both workers' pids among the main queue's pollers (the SDK's identity is pid@host). */
async function waitForPollers(address: string, taskQueue: string, workers: AppProcess[]): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    await until('both workers polling', async () => {
      for (const w of workers) if (w.exited()) throw new Error(`${w.name} exited at start`);
      const { pollers } = await connection.workflowService.describeTaskQueue({
        namespace: NAMESPACE,
        taskQueue: { name: taskQueue },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      const ids = (pollers ?? []).map((p) => p.identity ?? '');
      return workers.every((w) => ids.some((id) => id.startsWith(`${w.pid}@`)));
    }, 180_000);
  } finally {
    await connection.close();
  }
}

/** Counts from SQL visibility, by the search attributes we registered. */
async function reportVisibility(address: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const count = async (query: string) => Number((await connection.workflowService.countWorkflowExecutions({ namespace: NAMESPACE, query })).count ?? 0);
    const [completed, failed, cards] = await Promise.all([
      count(`ExecutionStatus = 'Completed'`),
      count(`ExecutionStatus = 'Failed'`),
      count(`FlowKind = 'cardLifecycle'`),
    ]);
    say(`SQL visibility in ${NAMESPACE}: ${completed} completed, ${failed} failed (the one asked for), ${cards} with FlowKind = 'cardLifecycle'`);
  } finally {
    await connection.close();
  }
}

async function reportDeliveries(control: SandboxControlClient): Promise<void> {
  const deliveries = await control.webhooks();
  const refused = deliveries.flatMap((d) => d.attempts).filter((a) => a.statusCode === null).length;
  const delivered = deliveries.filter((d) => d.status === 'DELIVERED').length;
  say(`webhooks: ${delivered} of ${deliveries.length} delivered; ${refused} attempt(s) found no bridge (the killed one) and were redelivered`);
}

// --- Helpers ---------------------------------------------------------------------------------

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
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

/**
 * A flow's result, asked again when the wait itself broke (the server restarting): the SDK's own
 * retries give up after a few seconds; a flow's outcome is final only when the flow says so.
 */
async function outlastingOutages<R>(result: () => Promise<R>, timeoutMs = 180_000): Promise<R> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await result();
    } catch (err) {
      const transient = err instanceof ServiceError || [4, 14].includes((err as { code?: number }).code ?? -1);
      if (!transient || Date.now() > deadline) throw err;
      await pause(1000);
    }
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function stopAll(): Promise<void> {
  for (const stop of stoppers.reverse()) await stop().catch((err: unknown) => say(`while stopping: ${(err as Error).message}`));
  stoppers.length = 0;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    say(`${signal}: stopping everything`);
    void stopAll().then(() => process.exit(130));
  });
}

void main()
  .catch((err: unknown) => {
    say(`FAILED: ${(err as Error).stack ?? String(err)}`);
    return 1;
  })
  .then(async (code) => {
    if (!interrupted) await stopAll();
    say(`stopped everything it started`);
    process.exit(code);
  });

