/**
 * `npm run demo`: the whole system on the embedded default, every flow end to end.
 *
 * Starts the local stack (tools/local-stack.ts: a Temporal dev server in memory, the codec
 * endpoint, the provider sandbox, the webhook bridge and the workers), each on its default port
 * when free and on a free one otherwise, so a running dev setup is left alone; runs DEMO_FLOWS
 * (tools/flows.ts) through the typed client; prints a summary, the Temporal UI address and the
 * sandbox ledger's verdict; then stops what it started. `--keep` leaves everything running until Ctrl-C,
 * and prints the exports a service needs to call this stack (README, "Calling it from your service").
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import { loadConfigOrExit, type Config } from '../src/config';
import { DEVELOPMENT_NEXUS_CALLER } from '../src/nexus/callers';
import type { WaitTimings } from '../src/shared/types';
import { createCardIssuingClient } from '../src/starter/connect';
import { cleanUpFlowRun, DEMO_FLOWS, flowTable, ledgerVerdict, runFlows, type FlowRun } from './flows';
import { quietWorkerRuntime, startLocalStack, type LocalStack } from './local-stack';
import { DEFAULT_NEXUS_ENDPOINT, callerEndpoints, ensureNexusEndpoints } from '../src/temporal/nexus-endpoint';

/** The sandbox answers in well under a second; short waits keep the demo brisk (a FAILED card sends no webhook). */
const TIMINGS: WaitTimings = { webhookWaitMs: 2000, pollInitialIntervalMs: 250, pollMaxIntervalMs: 1000, deadlineMs: 60_000 };

const log = (line: string) => process.stderr.write(`demo: ${line}\n`);
const out = (line: string) => process.stdout.write(`${line}\n`);

async function main(stack: LocalStack): Promise<number> {
  const client = await createCardIssuingClient(stack.config);
  const run: FlowRun = { client, control: stack.control, timings: TIMINGS, tag: 'Demo', log, awaitResult: (result) => result(), made: {} };
  try {
    const rows = await runFlows(DEMO_FLOWS, run);
    out(`\n${flowTable(rows)}\n`);
    const ledger = await ledgerVerdict(stack.control);
    out(`${ledger.line[0].toUpperCase()}${ledger.line.slice(1)}.`);
    out(`Temporal UI: ${stack.server?.uiUrl ?? '(headless)'}/namespaces/${stack.config.temporal.namespace}/workflows`);
    out(`Running: ${stack.addresses.join(' · ')}`);
    out(`Nexus endpoints for callers in other namespaces: ${await demoNexusEndpoint(stack)}`);
    const ok = rows.every((r) => r.ok) && ledger.ok;
    out(ok ? 'Every flow ended as expected.' : 'Some flows did not end as expected (see above).');
    if (process.argv.includes('--keep')) {
      // The demo's card ends deleted: the service gets a card of its own to move money on.
      const card = await client.issueCard({ cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace', timings: TIMINGS, idempotencyKey: `demo-service-card-${randomUUID()}` });
      out(`\n${serviceExports(stack, card.cardId).join('\n')}\n`);
      await untilInterrupted();
    }
    return ok ? 0 : 1;
  } finally {
    cleanUpFlowRun(run);
    await client.close();
  }
}

/** The endpoints of docs/nexus.md, "Calling it" (one per caller: in development, `card-issuing-dev`), pointed at this stack. */
async function demoNexusEndpoint(stack: LocalStack): Promise<string> {
  const targets = callerEndpoints(DEFAULT_NEXUS_ENDPOINT, stack.config.temporal.namespace, stack.config.temporal.taskQueue, stack.config.nexus.callers);
  if (targets.length === 0) return 'none (NEXUS_CALLERS names no caller)';
  try {
    await ensureNexusEndpoints(stack.client.connection as Connection, targets);
    return targets.map((t) => `${t.name} (service cardIssuing, for caller ${t.caller!.name}, routed to ${t.namespace}/${t.taskQueue})`).join(', ');
  } catch (err) {
    return `not made (${(err as Error).message}): npm run starter -- nexus-endpoint`;
  }
}

/**
 * What a service (examples/fund-service, or any caller of optionsFromEnv) and the CLI need to call this
 * stack, as lines to paste into a shell: the demo may have picked other ports than the defaults, and
 * its keys are the public development keys, which both take only with CARD_ISSUING_DEVELOPMENT=true.
 */
function serviceExports(stack: LocalStack, cardId: string): string[] {
  const { temporal, codec, pin, cardActions } = stack.config;
  return [
    '# To call this stack from a service (optionsFromEnv) or the CLI, in another shell:',
    `export TEMPORAL_ADDRESS=${temporal.address} TEMPORAL_NAMESPACE=${temporal.namespace} TEMPORAL_TASK_QUEUE=${temporal.taskQueue}`,
    `export PAYLOAD_CODEC_KEY=${codec.key} PAYLOAD_CODEC_KEY_ID=${codec.keyId}`,
    `export PIN_SEAL_PUBLIC_KEY=${pin.publicKey} PIN_SEAL_KEY_ID=${pin.keyId}`,
    `export CARD_ACTION_SIGNING_KEY=${cardActions.signing.privateKey} CARD_ACTION_KEY_ID=${cardActions.signing.keyId}`,
    "export CARD_ISSUING_DEVELOPMENT=true   # these keys are public development keys: taken only with this, never in production",
    `export CARD_ID=${cardId}   # an enabled card with 10.00 on it, issued for you`,
    `# ${stack.addresses.join(' · ')}`,
  ];
}

/** The demo's own dev server serves a Nexus caller even outside development: NEXUS_CALLERS's, or development's `dev` (docs/nexus.md). */
function withNexusCaller(config: Config): Config {
  return config.nexus.callers.length > 0 ? config : { ...config, nexus: { callers: [DEVELOPMENT_NEXUS_CALLER] } };
}

function untilInterrupted(): Promise<void> {
  out('--keep: everything keeps running; Ctrl-C stops it.');
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

async function demo(): Promise<number> {
  // Worker state changes (INFO) and the expected failure (WARN) would drown the demo's own lines.
  quietWorkerRuntime();
  const stack = await startLocalStack({ base: withNexusCaller(loadConfigOrExit()), devServer: {}, ports: 'default', codecEndpoint: true, log });
  try {
    return await main(stack);
  } finally {
    await stack.close();
  }
}

demo().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log((err as Error).message);
    process.exit(1);
  },
);
