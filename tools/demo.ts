/**
 * `npm run demo`: the whole system on the embedded default, every flow end to end.
 *
 * Starts the local stack (tools/local-stack.ts: a Temporal dev server in memory, the codec
 * endpoint, the provider sandbox, the webhook bridge and the workers), each on its default port
 * when free and on a free one otherwise, so a running dev setup is left alone; runs DEMO_FLOWS
 * (tools/flows.ts) through the typed client; prints a summary, the Temporal UI address and the
 * sandbox ledger's verdict; then stops what it started. `--keep` leaves everything running until Ctrl-C.
 */
import type { Connection } from '@temporalio/client';
import { loadConfigOrExit } from '../src/config';
import type { WaitTimings } from '../src/shared/types';
import { createCardIssuingClient } from '../src/starter/connect';
import { cleanUpFlowRun, DEMO_FLOWS, flowTable, ledgerVerdict, runFlows, type FlowRun } from './flows';
import { quietWorkerRuntime, startLocalStack, type LocalStack } from './local-stack';
import { DEFAULT_NEXUS_ENDPOINT, ensureNexusEndpoint } from '../src/temporal/nexus-endpoint';
import { nexusQueue } from '../src/shared/task-queues';

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
    out(`Nexus endpoint for callers in other namespaces: ${await demoNexusEndpoint(stack)}`);
    const ok = rows.every((r) => r.ok) && ledger.ok;
    out(ok ? 'Every flow ended as expected.' : 'Some flows did not end as expected (see above).');
    if (process.argv.includes('--keep')) await untilInterrupted();
    return ok ? 0 : 1;
  } finally {
    cleanUpFlowRun(run);
    await client.close();
  }
}

/** The endpoint of README "Calling from another namespace", pointed at this stack (a dev server of the demo's own, or the one configured). */
async function demoNexusEndpoint(stack: LocalStack): Promise<string> {
  const target = { name: DEFAULT_NEXUS_ENDPOINT, namespace: stack.config.temporal.namespace, taskQueue: nexusQueue(stack.config.temporal.taskQueue) };
  try {
    await ensureNexusEndpoint(stack.client.connection as Connection, target);
    return `${target.name} (service cardIssuing, routed to ${target.namespace}/${target.taskQueue})`;
  } catch (err) {
    return `not made (${(err as Error).message}): npm run starter -- nexus-endpoint`;
  }
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
  const stack = await startLocalStack({ base: loadConfigOrExit(), devServer: {}, ports: 'default', codecEndpoint: true, log });
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
