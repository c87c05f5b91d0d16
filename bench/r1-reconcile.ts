/**
 * R1: reconcile-cards over N cards beside a P1-style load (issue 22). N cards are made at the
 * provider with their card workflows (CARD_CREATED through the bridge); then issuing flows keep
 * GET /cards/{id} saturated (webhooks dropped, provisioning slow) with a constant number in flight,
 * and funding and withdrawal flows keep their endpoints busy. Three phases, in one run:
 *   1. baseline: the load alone, `windows` windows;
 *   2. beside the load: reconcile-cards starts, the load goes on for as many windows;
 *   3. the tail: the load stops, and the run finishes at its own pace.
 * Counted at each window boundary: each busy endpoint's window used (flows and reconciliation
 * together), reconciliation's reads per window against its share, 429s; from the issuing flows'
 * histories, how long their GET /cards calls waited to start (p99) in phases 1 and 2; and the
 * tail's duration against its physical limit (the cards it read there ÷ its share of the window).
 * Reconciliation's reads go behind every flow's call (the lowest task priority): beside a load
 * that keeps GET /cards backlogged they wait, by design (docs/rate-budget.md).
 */
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { createProviderClient } from '../src/provider/client';
import { RECONCILIATIONS, reconcileProgressQuery } from '../src/shared/reconciliation';
import { entityQueue } from '../src/shared/task-queues';
import { entityWorkflowId } from '../src/shared/ids';
import { createCardIssuingClient } from '../src/starter';
import { readyCards } from './cards';
import { log, mapLimit, percentile, round, sleep, until } from './lib';
import { LIMITS, served, stopFlows, untilBoundary, type Stats } from './p1-rate-budget';
import { uniqueQueue, type BenchStack } from './stack';

const SHARE = 0.1;
/** Issuing flows kept in flight: each polls GET /cards/{id} about twice a second: 4 of them ask 4× the flows' share of a 60 s window. */
const ISSUING_IN_FLIGHT = 4;
const PROVISIONING_MS = 15_000;
const TIMINGS = { webhookWaitMs: 300, pollInitialIntervalMs: 200, pollMaxIntervalMs: 500, deadlineMs: 30 * 60_000 };
const BUSY = { getCard: LIMITS.general, fundCard: LIMITS.balance, withdrawFromCard: LIMITS.balance } as const;

export interface R1Result {
  cards: number;
  /** Card workflows the run read (the N cards, and those the load's issuing flows made meanwhile). */
  checked: number;
  windowMs: number;
  share: number;
  /** Per busy endpoint: served per window (baseline phase, beside reconciliation) and the lowest share of the window used beside it. */
  endpoints: Record<string, { limit: number; baseline: number[]; withReconcile: number[]; minRatioWithReconcile: number }>;
  /** Cards reconciliation read per window beside the load and in the tail, and the most of its share it took in any window. */
  reconcileReadsPerWindow: { besideLoad: number[]; tail: number[] };
  maxShareRatio: number;
  /** p99 ms an issuing flow's GET /cards call waited to start, without and with reconciliation. */
  waitP99: { baseline: number; withReconcile: number };
  waitRatio: number;
  answers429: number;
  reconcileMs: number;
  /** The tail (load stopped): its duration, the physical limit of the cards it read, and their ratio. */
  tailMs: number;
  tailPhysicalLimitMs: number;
  durationRatio: number;
  differences: number;
}

export async function runR1(stack: BenchStack, cards: number, baselineWindows: number, windowMs: number): Promise<R1Result> {
  await stack.control.reset();
  await stack.control.configure({ cardProvisioningMs: 0, rateLimit: { windowMs, general: 1_000_000, sensitive: 1_000_000, balance: 1_000_000 } });
  const queue = uniqueQueue('r1');
  await stack.bridge(queue);
  const env = { PROVIDER_RATE_WINDOW_MS: String(windowMs), RECONCILE_BUDGET_SHARE: String(SHARE), BENCH_ENFORCE: '1' };
  for (let i = 0; i < 2; i++) await stack.worker('fleet', queue, env);

  log(`R1: ${cards} cards with their card workflows`);
  await makeCards(stack, cards);
  const temporal = stack.client();
  const cardWorkflows = `WorkflowType = 'cardLifecycle' AND ExecutionStatus = 'Running' AND TaskQueue = '${entityQueue(queue)}'`;
  await until('every card workflow running', async () => ((await temporal.workflow.count(cardWorkflows)).count >= cards ? true : undefined), 10 * 60_000, 1000);
  const moneyCards = await readyCards(stack, 10);
  await stack.control.configure({ cardProvisioningMs: PROVISIONING_MS, webhook: { dropRate: 1 }, rateLimit: { windowMs, ...LIMITS } });

  const client = await createCardIssuingClient(stack.config(queue));
  let running = true;
  /** Cards the issuing flows made, by the phase their flow started in: their card workflows polled GET /cards/{id}. */
  const issued: Array<{ cardId: string; phase: 'baseline' | 'reconcile' }> = [];
  let phase: 'baseline' | 'reconcile' = 'baseline';
  // Closed loop for issuing: a constant backlog on GET /cards, so the two phases' waits compare.
  const issuing = Array.from({ length: ISSUING_IN_FLIGHT }, async () => {
    while (running) {
      const h = await client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'Bench', lastName: 'Mark', timings: TIMINGS }).catch(() => undefined);
      if (!h) continue;
      const startedIn = phase;
      await h.result().then((card) => issued.push({ cardId: card.cardId, phase: startedIn }), () => undefined);
    }
  });
  let n = 0;
  const money = (start: () => Promise<{ result(): Promise<unknown> }>) =>
    (async () => {
      const perSecond = (1.2 * LIMITS.balance * 1000) / windowMs;
      for (let i = 0; running; i++) {
        await sleep(1000 / perSecond);
        void start().then((h) => h.result()).catch(() => undefined);
      }
    })();
  const lanes = [money(() => client.startFundCard({ cardId: moneyCards[n++ % 10], amount: 100, timings: TIMINGS })), money(() => client.startWithdrawFromCard({ cardId: moneyCards[n++ % 10], amount: 100, timings: TIMINGS }))];

  await sleep(untilBoundary(windowMs) + windowMs);
  const snapshots: Stats[] = [await stack.control.stats()];
  for (let w = 0; w < baselineWindows; w++) {
    await sleep(untilBoundary(windowMs));
    snapshots.push(await stack.control.stats());
  }
  const baselineEnd = snapshots.length - 1;

  log('R1: reconcile-cards beside the load');
  phase = 'reconcile';
  const workflowId = `${RECONCILIATIONS.cards.scheduleId}/bench/${queue}`;
  const began = Date.now();
  // Pages of 10, so the progress query moves about once a window.
  const handle = await temporal.workflow.start('reconcileCards', { taskQueue: queue, workflowId, args: [{ pageSize: 10 }], workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE });
  const checkedAt: number[] = [0];
  let done = false;
  const result = patiently(() => handle.result()).then((r) => ((done = true), r as { checked: number; differences: unknown[] }));
  const measureWindow = async () => {
    await Promise.race([sleep(untilBoundary(windowMs)), result]);
    if (done) return;
    snapshots.push(await stack.control.stats());
    checkedAt.push(await handle.query(reconcileProgressQuery).then((p) => p.checked, () => checkedAt[checkedAt.length - 1]));
  };
  for (let w = 0; w < baselineWindows && !done; w++) await measureWindow();
  const besideEnd = snapshots.length - 1;
  const windowsBeside = checkedAt.length - 1;

  log('R1: the load stops; reconciliation finishes at its pace');
  running = false;
  await stopLoad(stack, queue);
  await Promise.all([...lanes, ...issuing]);
  const tailBegan = Date.now();
  const checkedAtTail = checkedAt[checkedAt.length - 1];
  while (!done) await measureWindow();
  const report = await result;
  const reconcileMs = Date.now() - began;
  const tailMs = Date.now() - tailBegan;
  await stopFlows(stack, queue);

  const perWindow = (key: string, from: number, to: number) => snapshots.slice(from + 1, to + 1).map((s, i) => served(s, key) - served(snapshots[from + i], key));
  const endpoints: R1Result['endpoints'] = {};
  for (const [key, limit] of Object.entries(BUSY)) {
    const withReconcile = perWindow(key, baselineEnd, besideEnd);
    endpoints[key] = { limit, baseline: perWindow(key, 0, baselineEnd), withReconcile, minRatioWithReconcile: round(Math.min(...withReconcile) / limit) };
  }
  const reads = checkedAt.slice(1).map((c, i) => c - checkedAt[i]);
  const shareLimit = SHARE * LIMITS.general;
  const waits = await callWaits(stack, issued);
  const final = snapshots[snapshots.length - 1];
  // The physical limit of the tail: the cards it read ÷ its share of the window (limit × share per window).
  const tailPhysicalLimitMs = Math.round(((report.checked - checkedAtTail) / shareLimit) * windowMs);
  const result1: R1Result = {
    cards,
    checked: report.checked,
    windowMs,
    share: SHARE,
    endpoints,
    reconcileReadsPerWindow: { besideLoad: reads.slice(0, windowsBeside), tail: reads.slice(windowsBeside) },
    maxShareRatio: round(Math.max(0, ...reads) / shareLimit),
    waitP99: waits,
    waitRatio: round(waits.withReconcile / waits.baseline),
    answers429: Object.values(final).reduce((sum, s) => sum + (s.byStatus['429'] ?? 0), 0),
    reconcileMs,
    tailMs,
    tailPhysicalLimitMs,
    durationRatio: round(tailMs / tailPhysicalLimitMs),
    differences: report.differences.length,
  };
  log(`R1: ${JSON.stringify(result1)}`);
  await client.close();
  return result1;
}

/** Ends the load's flows only: the card workflows (reconciliation reads them) and the reconciliation go on. */
async function stopLoad(stack: BenchStack, queue: string): Promise<void> {
  const temporal = stack.client();
  const load: Array<{ workflowId: string; runId: string }> = [];
  const query = `TaskQueue = '${queue}' AND ExecutionStatus = 'Running' AND WorkflowType IN ('issueCard', 'fundCard', 'withdrawFromCard')`;
  for await (const wf of temporal.workflow.list({ query })) load.push(wf);
  await mapLimit(load, 32, (wf) => temporal.workflow.getHandle(wf.workflowId, wf.runId).terminate('load over').catch(() => undefined));
}

/** The result, asked again when a loaded server lets the long poll time out. */
async function patiently<T>(ask: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await ask();
    } catch (err) {
      if ((err as Error).name !== 'ServiceError') throw err;
      log(`R1: asking again (${(err as Error).message})`);
    }
  }
}

async function makeCards(stack: BenchStack, count: number): Promise<void> {
  const provider = createProviderClient(stack.config('bench').provider);
  try {
    await mapLimit(Array.from({ length: count }, (_, i) => i), 16, () => provider.createCard({ cardBinId: 'bin_visa_basic', initialAmount: 1_000, firstName: 'Recon', lastName: 'Card' }));
  } finally {
    await provider.close();
  }
}

/** p99 of how long the card workflows' GET /cards/{id} polls (issuing's one-way waiting) waited to start, by phase, from a sample of their histories. */
async function callWaits(stack: BenchStack, cards: Array<{ cardId: string; phase: string }>): Promise<{ baseline: number; withReconcile: number }> {
  const waits: Record<string, number[]> = { baseline: [], reconcile: [] };
  for (const p of ['baseline', 'reconcile']) {
    await mapLimit(cards.filter((c) => c.phase === p).slice(-60), 8, async ({ cardId }) => {
      const history = await stack.client().workflow.getHandle(entityWorkflowId('card', cardId)).fetchHistory();
      const scheduled = new Map<string, number>();
      for (const e of history.events ?? []) {
        const at = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
        if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'getCard') scheduled.set(String(e.eventId), at);
        const started = e.activityTaskStartedEventAttributes;
        if (started && scheduled.has(String(started.scheduledEventId))) waits[p].push(at - scheduled.get(String(started.scheduledEventId))!);
      }
    });
  }
  log(`R1: GET /cards waits sampled: ${waits.baseline.length} baseline, ${waits.reconcile.length} beside reconciliation`);
  return { baseline: waits.baseline.length ? percentile(waits.baseline, 99) : Number.NaN, withReconcile: waits.reconcile.length ? percentile(waits.reconcile, 99) : Number.NaN };
}
