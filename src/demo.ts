/**
 * `npm run demo`: the whole system on the embedded default, every flow end to end.
 *
 * Starts a Temporal dev server (in memory), the codec endpoint, the provider sandbox, the
 * webhook bridge and the workers, each on its default port when free and on a free one
 * otherwise (so a running dev setup is left alone); runs every flow through the typed client;
 * prints a summary, the Temporal UI address and the sandbox ledger's verdict; then stops what
 * it started. `--keep` leaves everything running until Ctrl-C.
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfigOrExit, type Config } from './config';
import { startBridge } from './bridge';
import { startCodecServer } from './codec/codec-server';
import { createPayloadCodec } from './codec/payload-codec';
import { startSandbox } from './sandbox';
import { ensureTemporalCli } from './temporal/cli';
import { freePort, startDevServer } from './temporal/dev-server';
import { createWorkers } from './temporal/workers';
import { applicationFailureOf, createCardIssuingClient, type CardIssuingClient } from './starter';
import { renderTable } from './starter/output';
import type { WaitTimings } from './shared/types';
import { sampleKycForm, writeSampleDocuments } from './sandbox/kyc-samples';

/** The sandbox answers in well under a second; short waits keep the demo brisk (a FAILED card sends no webhook). */
const TIMINGS: WaitTimings = { webhookWaitMs: 2000, pollInitialIntervalMs: 250, pollMaxIntervalMs: 1000, deadlineMs: 60_000 };
const UI_PORT = 8233;

interface Running {
  config: Config;
  client: CardIssuingClient;
  sandboxUrl: string;
  uiUrl?: string;
  addresses: string[];
}

interface FlowRow {
  flow: string;
  workflowId: string;
  outcome: string;
  ok: boolean;
  ms: number;
}

const log = (line: string) => process.stderr.write(`demo: ${line}\n`);
/** Stops in reverse order of starting. */
const stoppers: Array<() => Promise<unknown>> = [];

async function main(): Promise<number> {
  const keep = process.argv.includes('--keep');
  const base = loadConfigOrExit();
  // Worker state changes (INFO) and the expected failure (WARN) would drown the demo's own lines.
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const running = await startEverything(base);
  const rows = await runFlows(running);
  process.stdout.write(`\n${table(rows)}\n\n`);
  const conserved = await checkLedger(running.sandboxUrl);
  process.stdout.write(`Temporal UI: ${running.uiUrl ?? '(headless)'}/namespaces/${running.config.temporal.namespace}/workflows\n`);
  process.stdout.write(`Running: ${running.addresses.join(' · ')}\n`);
  const ok = rows.every((r) => r.ok) && conserved;
  process.stdout.write(ok ? 'Every flow ended as expected.\n' : 'Some flows did not end as expected (see above).\n');
  if (keep) await untilInterrupted();
  return ok ? 0 : 1;
}

// --- Starting the system -------------------------------------------------------------------

async function startEverything(base: Config): Promise<Running> {
  const cliPath = await ensureTemporalCli(base.temporal.cliPath, log);
  const temporalPort = await preferredPort(Number(base.temporal.address.split(':')[1]) || 7233);
  const uiPort = await preferredPort(UI_PORT);
  const uiOrigins = [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`];

  const codec = await startCodecServer({ port: await preferredPort(base.codec.serverPort), codec: createPayloadCodec(base.codec), allowedOrigins: uiOrigins });
  stoppers.push(() => codec.close());
  log(`codec endpoint on ${codec.url}`);

  log('starting a Temporal dev server (in memory) ...');
  const server = await startDevServer({ cliPath, port: temporalPort, uiPort, namespace: base.temporal.namespace, codecEndpoint: codec.url });
  stoppers.push(() => server.stop());
  log(`Temporal on ${server.address}, UI at ${server.uiUrl}`);

  const sandbox = await startSandbox({
    port: await preferredPort(base.sandbox.port),
    apiKey: base.provider.apiKey,
    apiSecret: base.provider.apiSecret,
    webhookSecret: base.provider.webhookSecret,
  });
  stoppers.push(() => sandbox.close());

  // The embedded default: our own server and sandbox, whatever the environment points at.
  const config: Config = {
    ...base,
    temporal: { ...base.temporal, address: server.address, tls: false, tlsCertPath: undefined, tlsKeyPath: undefined, apiKey: undefined },
    provider: { ...base.provider, baseUrl: sandbox.url },
  };
  const bridge = await startBridge(config, { port: await preferredPort(base.bridge.port) });
  stoppers.push(() => bridge.close());
  // The sandbox must deliver webhooks to the bridge's actual port, which may not be the default.
  await control(sandbox.url, 'PUT', '/config', { webhookUrl: `${bridge.url}/webhooks/provider` });
  log(`provider sandbox on ${sandbox.url}, bridge on ${bridge.url}/webhooks/provider`);

  log('starting the workers (bundling the workflows) ...');
  const fleet = await createWorkers({ config });
  const workersDone = fleet.run();
  stoppers.push(async () => {
    fleet.shutdown();
    await workersDone;
  });

  const client = await createCardIssuingClient(config);
  stoppers.push(() => client.close());
  return {
    config,
    client,
    sandboxUrl: sandbox.url,
    uiUrl: server.uiUrl,
    addresses: [`Temporal ${server.address}`, `UI ${server.uiUrl}`, `codec ${codec.url}`, `sandbox ${sandbox.url}`, `bridge ${bridge.url}`],
  };
}

/** The default port when it is free, otherwise any free one. */
async function preferredPort(port: number): Promise<number> {
  const free = await new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
  return free ? port : freePort();
}

// --- The flows -----------------------------------------------------------------------------

async function runFlows(r: Running): Promise<FlowRow[]> {
  const rows: FlowRow[] = [];
  const { client } = r;
  const step: Step = async (flow, run, expectedFailure) => {
    const started = Date.now();
    const at = { workflowId: '' };
    const [outcome, ok] = await run(at).then(
      (text) => [text, expectedFailure === undefined] as const,
      (err: unknown) => failedOutcome(err, expectedFailure),
    );
    rows.push({ flow, workflowId: at.workflowId, outcome, ok, ms: Date.now() - started });
    log(`${ok ? 'ok  ' : 'FAIL'} ${flow}: ${outcome}`);
  };

  let cardId = '';
  await step('issue card', async (at) => {
    const h = await client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace', timings: TIMINGS });
    at.workflowId = h.workflowId;
    const card = await h.result();
    cardId = card.cardId;
    return `${card.status} ${card.cardNumber}, balance ${money(card.availableBalance)}`;
  });
  if (!cardId) return rows;
  const cardWf = `card/${cardId}`;
  await step('fund card', async (at) => {
    const h = await client.startFundCard({ cardId, amount: 2500, timings: TIMINGS });
    at.workflowId = h.workflowId;
    return `${(await h.result()).status} +${money(2500)}`;
  });
  await step('withdraw from card', async (at) => {
    const h = await client.startWithdrawFromCard({ cardId, amount: 1000, timings: TIMINGS });
    at.workflowId = h.workflowId;
    return `${(await h.result()).status} -${money(1000)}`;
  });
  // Steps that act on the card through its own workflow.
  const onCard = (op: () => Promise<string>) => async (at: { workflowId: string }) => {
    at.workflowId = cardWf;
    return op();
  };
  await step('freeze (update)', onCard(async () => (await client.freeze(cardId)).status));
  await step('unfreeze (update)', onCard(async () => (await client.unfreeze(cardId)).status));
  await step('card transaction (webhook)', onCard(async () => {
    await control(r.sandboxUrl, 'POST', `/cards/${cardId}/transactions`, { amount: 420, merchantName: 'Demo Coffee' });
    const seen = await eventually(async () => (await client.cardState(cardId)).recentTransactions.find((t) => t.merchantName === 'Demo Coffee'));
    return `${money(seen.amount)} at ${seen.merchantName}, seen by the card workflow`;
  }));
  await step('card state (query)', onCard(async () => {
    const state = await client.cardState(cardId);
    return `${state.status}, balance ${money(state.card?.availableBalance ?? 0)}, ${state.recentTransactions.length} transaction(s)`;
  }));
  await step('reveal sensitive (sealed)', onCard(async () => {
    const sensitive = await client.revealSensitive(cardId);
    // Proof without disclosure: the last four match the masked card, and only they are printed.
    return `PAN …${sensitive.cardNumber.slice(-4)} unsealed by the client only`;
  }));
  await step(
    'failing card (firstName FAIL)',
    async (at) => {
      const h = await client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'FAIL', lastName: 'Demo', timings: TIMINGS });
      at.workflowId = h.workflowId;
      return (await h.result()).status;
    },
    'CardProvisioningFailed',
  );
  await runLaterFlows(r, step);
  await step('delete card (update)', onCard(async () => (await client.delete(cardId)).status));
  return rows;
}

/** Runs one flow: `run` names its workflow in `at` as soon as it is known and resolves the outcome's text. */
type Step = (flow: string, run: (at: { workflowId: string }) => Promise<string>, expectedFailure?: string) => Promise<void>;

/** KYC, eSIM and payouts: run when this build's workflows include them. */
async function runLaterFlows(r: Running, step: Step): Promise<void> {
  const { client } = r;
  const available = registeredWorkflows();
  if (available.has('onboardCardholder')) {
    const docs = writeSampleDocuments();
    try {
      await step('KYC onboarding', async (at) => {
        const h = await client.startOnboardCardholder(sampleKycForm(docs.documents, { timings: TIMINGS }));
        at.workflowId = h.workflowId;
        const res = await h.result();
        return `${res.kycStatus} ${res.id}`;
      });
      await step('KYC onboarding (rejected)', async (at) => {
        const h = await client.startOnboardCardholder(sampleKycForm(docs.documents, { idNumber: `REJECT${randomBytes(4).toString('hex')}`, timings: TIMINGS }));
        at.workflowId = h.workflowId;
        const res = await h.result();
        // A rejection is a result of the flow; here it is the one asked for.
        if (res.kycStatus !== 'REJECTED') throw new Error(`expected REJECTED, got ${res.kycStatus}`);
        return `${res.kycStatus} (${res.reason ?? 'no reason'}), as asked`;
      });
    } finally {
      rmSync(docs.dir, { recursive: true, force: true });
    }
  }
  let esimNo: string | null = null;
  if (available.has('purchaseEsim')) {
    await step('eSIM purchase', async (at) => {
      const h = await client.startPurchaseEsim({ planNo: 'epln_global_1gb', timings: TIMINGS });
      at.workflowId = h.workflowId;
      const order = await h.result();
      esimNo = order.esimNo ?? null;
      return `${order.status} ${order.esimNo}${order.amount === undefined ? '' : `, ${money(order.amount)}`}`;
    });
  }
  if (available.has('rechargeEsim') && esimNo) {
    const target = esimNo;
    await step('eSIM recharge', async (at) => {
      const h = await client.startRechargeEsim({ esimNo: target, timings: TIMINGS });
      at.workflowId = h.workflowId;
      const order = await h.result();
      return `${order.status} ${order.orderNo}`;
    });
  }
  if (available.has('sendPayout')) {
    await step('payout', async (at) => {
      const merOrderNo = `demo_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
      const h = await client.startSendPayout({
        merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 5000,
        payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: TIMINGS,
      });
      at.workflowId = h.workflowId;
      const payout = await h.result();
      return `${payout.status} ${(payout.arriveAmount ?? 0) / 100} ${payout.arriveCurrency ?? ''}`;
    });
  }

}

/** The workflow types this build registers (the worker bundles the same module). */
function registeredWorkflows(): Set<string> {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return new Set(Object.keys(require('./workflows') as object));
  } catch {
    return new Set();
  }
}

/** A failure is the outcome asked for only when its type is the expected one. */
function failedOutcome(err: unknown, expectedFailure?: string): readonly [string, boolean] {
  const failure = applicationFailureOf(err);
  const type = failure?.type ?? (err as Error)?.name ?? 'Error';
  if (expectedFailure && type === expectedFailure) return [`${type}, as expected`, true];
  return [`${type}: ${failure?.message ?? (err as Error)?.message ?? String(err)}`, false];
}

// --- KYC sample data -----------------------------------------------------------------------

// --- Output and helpers --------------------------------------------------------------------

function table(rows: FlowRow[]): string {
  const cells = rows.map((r) => ({ flow: `${r.ok ? '✓' : '✗'} ${r.flow}`, 'workflow ID': r.workflowId, outcome: r.outcome, ms: r.ms }));
  return renderTable(cells, ['flow', 'workflow ID', 'outcome', 'ms'], { alignRight: ['ms'], rule: true });
}

async function checkLedger(sandboxUrl: string): Promise<boolean> {
  const ledger = await control<{ wallet: number; violations: unknown[]; totals: Record<string, number> }>(sandboxUrl, 'GET', '/ledger');
  const ok = ledger.violations.length === 0;
  process.stdout.write(
    ok
      ? `Sandbox ledger: money conserved, no idempotency key applied twice (wallet ${money(ledger.wallet)}).\n`
      : `Sandbox ledger: ${ledger.violations.length} violation(s): ${JSON.stringify(ledger.violations)}\n`,
  );
  return ok;
}

async function control<T = unknown>(sandboxUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${sandboxUrl}/sandbox${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`sandbox control ${method} ${path} answered ${res.status}`);
  return (await res.json()) as T;
}

/** Polls until `check` yields a value (webhooks arrive asynchronously). */
async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function money(cents: number): string {
  return (cents / 100).toFixed(2);
}

function untilInterrupted(): Promise<void> {
  process.stdout.write('--keep: everything keeps running; Ctrl-C stops it.\n');
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

async function stopAll(): Promise<void> {
  for (const stop of stoppers.reverse()) await stop().catch((err: unknown) => log(`while stopping: ${(err as Error).message}`));
}

void main()
  .catch((err: unknown) => {
    process.stderr.write(`demo: ${(err as Error).message}\n`);
    return 1;
  })
  .then(async (code) => {
    await stopAll();
    process.exit(code);
  });
