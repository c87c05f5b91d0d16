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
import { Connection } from '@temporalio/client';
import { rmSync } from 'node:fs';
import type { WaitTimings } from '../../src/shared/types';
import { cleanUpFlowRun, flowTable, ledgerVerdict, type FlowRun } from '../flows';
import { deliverySummary, outlastingOutages, runToExit, startCluster, stoppers } from './cluster';
import { runWaves } from './waves';

const NAMESPACE = 'card-issuing-smoke';
/** Waits long enough that a webhook lost with a killed bridge is redelivered to the other before polling takes over. */
const TIMINGS: WaitTimings = { webhookWaitMs: 15_000, pollInitialIntervalMs: 500, pollMaxIntervalMs: 2000, deadlineMs: 180_000 };
/** Slow enough that flows are still waiting on the provider when a worker, a bridge or the server goes away. */
const SANDBOX_SETTINGS = { cardProvisioningMs: 1500, kycReviewMs: 2500, esimIssueMs: 1000, payoutProcessingMs: 1500, webhook: { retryBaseMs: 500 } };

const say = (line: string) => process.stdout.write(`cluster-smoke: ${line}\n`);

async function main(): Promise<number> {
  const cluster = await startCluster({ name: 'cluster-smoke', namespace: NAMESPACE, workers: 2, bridges: 2, sandbox: SANDBOX_SETTINGS, say });
  const { client, control, server } = cluster;
  const run: FlowRun = { client, control, timings: TIMINGS, tag: 'Smoke', log: say, awaitResult: outlastingOutages, made: {} };
  stoppers.push(async () => cleanUpFlowRun(run));
  const rows = await runWaves(run, { server, worker: cluster.workers[0].process, bridge: cluster.bridges[0].process }, say);

  process.stdout.write(`\n${flowTable(rows)}\n\n`);
  const allOk = rows.every((r) => r.ok);
  say(allOk ? `every flow completed as asked (${rows.length} of ${rows.length})` : `${rows.filter((r) => !r.ok).length} of ${rows.length} flows did not end as asked`);
  await reportVisibility(server.address);
  const d = await deliverySummary(control);
  say(`webhooks: ${d.delivered} of ${d.total} delivered; ${d.noBridge} attempt(s) found no bridge (the killed one) and were redelivered`);
  const ledger = await ledgerVerdict(control);
  say(ledger.line);
  const ok = allOk && ledger.ok;
  say(ok ? 'PASSED' : 'FAILED');
  if (ok) rmSync(cluster.dir, { recursive: true, force: true });
  else say(`logs kept in ${cluster.dir}`);
  return ok ? 0 : 1;
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

runToExit(main, say);
