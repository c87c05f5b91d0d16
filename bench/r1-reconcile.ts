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
import { randomUUID } from 'node:crypto';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { createProviderClient } from '../src/provider/client';
import { RECONCILIATIONS, reconcileProgressQuery } from '../src/shared/reconciliation';
import { entityQueue } from '../src/shared/task-queues';
import { entityWorkflowId } from '../src/shared/ids';
import { createCardIssuingClient } from '../src/starter/connect';
import { readyCards } from './cards';
import { log, mapLimit, percentile, round, sleep, until, startMovementFlow } from './lib';
import { LIMITS, served, stopFlows, untilBoundary, type Stats } from './p1-rate-budget';
import { uniqueQueue, type BenchStack } from './stack';

const SHARE = 0.1;
/** Issuing flows kept in flight: each polls GET /cards/{id} about twice a second: 4 of them ask 4× the flows' share of a 60 s window. */
const ISSUING_IN_FLIGHT = 4;
const PROVISIONING_MS = 15_000;
/** At least this long between the load's start and its baseline: with shorter leads the baseline caught the backlogs still growing. */
const LEAD_IN_MS = 90_000;
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
  /** The flows' GET /cards calls: p99 ms they waited to start without and with reconciliation, how many were sampled, and how many a reconciliation read went before. */
  waits: { p99: { baseline: number; withReconcile: number }; samples: { baseline: number; withReconcile: number }; p99PerWindow: number[]; behindReconcile: number; behind: Behind[]; cutByStop: number };
  waitRatio: number;
  answers429: number;
  /** Answers 429 by phase (setup, baseline, beside, tail) and endpoint, where any came. */
  answers429By: Record<string, Record<string, number>>;
  reconcileMs: number;
  /** The window of the tail (the load's window unless `--r1-tail-window-ms` shortened it). */
  tailWindowMs: number;
  /** The tail (load stopped): its duration, the physical limit of the cards it read, and their ratio; windows it waited while the flows' backlog drained. */
  drainWindows: number;
  tailMs: number;
  tailPhysicalLimitMs: number;
  durationRatio: number;
  differences: number;
  /** The differences by kind, and whether each card is one of the N cards or one the load made. */
  differencesFound: Record<string, number>;
}

/**
 * `tailWindowMs`: the tail (reconciliation alone) may run on a shorter window than the load, so a
 * run of 10,000 cards fits in hours: its workers restart on that window (the run resumes on them,
 * taking the new pace at its next continue-as-new), and its physical limit is reckoned on it.
 */
export async function runR1(stack: BenchStack, cards: number, baselineWindows: number, windowMs: number, tailWindowMs = windowMs): Promise<R1Result> {
  await stack.control.reset();
  await stack.control.configure({ cardProvisioningMs: 0, rateLimit: { windowMs, general: 1_000_000, sensitive: 1_000_000, balance: 1_000_000 } });
  const queue = uniqueQueue('r1');
  await stack.bridge(queue);
  const env = (window: number) => ({ PROVIDER_RATE_WINDOW_MS: String(window), RECONCILE_BUDGET_SHARE: String(SHARE), BENCH_ENFORCE: '1' });
  const fleet = async (window: number) => Promise.all([stack.worker('fleet', queue, env(window)), stack.worker('fleet', queue, env(window))]);
  let workers = await fleet(windowMs);

  log(`R1: ${cards} cards with their card workflows`);
  const cardIds = await makeCards(stack, cards);
  const temporal = stack.client();
  const cardWorkflows = `WorkflowType = 'cardLifecycle' AND ExecutionStatus = 'Running' AND TaskQueue = '${entityQueue(queue)}'`;
  await until('every card workflow running', async () => ((await temporal.workflow.count(cardWorkflows)).count >= cards ? true : undefined), 10 * 60_000, 1000);
  const moneyCards = await readyCards(stack, 10);
  await stack.control.configure({ cardProvisioningMs: PROVISIONING_MS, webhook: { dropRate: 1 }, rateLimit: { windowMs, ...LIMITS } });
  // The window the cards were made in has counted them against the limits just lowered: the load starts in a fresh one.
  await sleep(untilBoundary(windowMs));

  const client = await createCardIssuingClient(stack.config(queue));
  let running = true;
  // Closed loop for issuing: a constant backlog on GET /cards, so the two phases' waits compare.
  const issuing = Array.from({ length: ISSUING_IN_FLIGHT }, async () => {
    while (running) {
      const h = await client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'Bench', lastName: 'Mark', timings: TIMINGS, idempotencyKey: randomUUID() }).catch(() => undefined);
      if (!h) continue;
      await h.result().catch(() => undefined);
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
  const lanes = [money(() => startMovementFlow(client, 'fundCard', { cardId: moneyCards[n++ % 10], amount: 100, timings: TIMINGS })), money(() => startMovementFlow(client, 'withdrawFromCard', { cardId: moneyCards[n++ % 10], amount: 100, timings: TIMINGS }))];

  // The load settles (its backlogs reach their steady size) before the baseline is measured.
  await sleep(untilBoundary(windowMs) + Math.ceil(LEAD_IN_MS / windowMs) * windowMs);
  const loadFrom = Date.now();
  const snapshots: Stats[] = [await stack.control.stats()];
  for (let w = 0; w < baselineWindows; w++) {
    await sleep(untilBoundary(windowMs));
    snapshots.push(await stack.control.stats());
  }
  const baselineEnd = snapshots.length - 1;

  log('R1: reconcile-cards beside the load');
  const workflowId = `${RECONCILIATIONS.cards.scheduleId}/bench/${queue}`;
  const began = Date.now();
  // Pages of 10, so the progress query moves about once a window.
  // Two pages a run when the tail's window differs: the run takes the new pace at its next continue-as-new.
  const pagesPerRun = tailWindowMs === windowMs ? undefined : 2;
  const handle = await temporal.workflow.start(RECONCILIATIONS.cards.workflowType, { taskQueue: queue, workflowId, args: [{ pageSize: 10, pagesPerRun }], workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE });
  const checkedAt: number[] = [0];
  let done = false;
  const result = patiently(() => handle.result()).then((r) => ((done = true), r as { checked: number; differences: Array<{ kind: string; ids: Record<string, string> }> }));
  let window = windowMs;
  const measureWindow = async () => {
    await Promise.race([sleep(untilBoundary(window)), result]);
    if (done) return;
    snapshots.push(await stack.control.stats());
    checkedAt.push(await handle.query(reconcileProgressQuery).then((p) => p.checked, () => checkedAt[checkedAt.length - 1]));
  };
  for (let w = 0; w < baselineWindows && !done; w++) await measureWindow();
  const besideEnd = snapshots.length - 1;
  const windowsBeside = checkedAt.length - 1;

  log('R1: the load stops; reconciliation finishes at its pace');
  running = false;
  const loadUntil = Date.now();
  await stopLoad(stack, queue);
  await Promise.all([...lanes, ...issuing]);
  if (tailWindowMs !== windowMs) {
    log(`R1: the tail on ${tailWindowMs} ms windows: the workers restart on it`);
    await Promise.all(workers.map((w) => w.stop()));
    window = tailWindowMs;
    await stack.control.configure({ rateLimit: { windowMs: tailWindowMs, ...LIMITS } });
    workers = await fleet(tailWindowMs);
    await sleep(untilBoundary(window));
    // Not a window of either pace: the interval in which the load stopped and the workers restarted.
    snapshots.push(await stack.control.stats());
    checkedAt.push(await handle.query(reconcileProgressQuery).then((p) => p.checked));
  }
  const tailFrom = { snapshot: snapshots.length - 1, checked: checkedAt.length - 1 };
  const tailBegan = Date.now();
  const checkedAtTail = checkedAt[tailFrom.checked];
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
  const readsBetween = (from: number, to: number) => checkedAt.slice(from + 1, to + 1).map((c, i) => c - checkedAt[from + i]);
  const reads = { besideLoad: readsBetween(0, windowsBeside), tail: readsBetween(tailFrom.checked, checkedAt.length - 1) };
  const shareLimit = SHARE * LIMITS.general;
  const waits = await callWaits(stack, queue, moneyCards, { windowMs, loadFrom, reconcileFrom: began, loadUntil }, await reconcileReadStarts(stack, workflowId));
  const drainWindows = reads.tail.findIndex((r) => r > 0);
  // The physical limit of the tail: the cards it read ÷ its share of the window (limit × share per window).
  const tailPhysicalLimitMs = Math.round(((report.checked - checkedAtTail) / shareLimit) * tailWindowMs);
  const last = snapshots.length - 1;
  const answers429By = {
    setup: rejected(undefined, snapshots[0]),
    baseline: rejected(snapshots[0], snapshots[baselineEnd]),
    beside: rejected(snapshots[baselineEnd], snapshots[besideEnd]),
    stopping: rejected(snapshots[besideEnd], snapshots[tailFrom.snapshot]),
    tail: rejected(snapshots[tailFrom.snapshot], snapshots[last]),
  };
  const result1: R1Result = {
    cards,
    checked: report.checked,
    windowMs,
    share: SHARE,
    endpoints,
    reconcileReadsPerWindow: reads,
    maxShareRatio: round(Math.max(0, ...reads.besideLoad, ...reads.tail) / shareLimit),
    waits,
    waitRatio: round(waits.p99.withReconcile / waits.p99.baseline),
    answers429: Object.values(rejected(undefined, snapshots[last])).reduce((sum, n) => sum + n, 0),
    answers429By,
    reconcileMs,
    tailWindowMs,
    drainWindows: Math.max(0, drainWindows),
    tailMs,
    tailPhysicalLimitMs,
    durationRatio: round(tailMs / tailPhysicalLimitMs),
    differences: report.differences.length,
    differencesFound: whereDifferencesAre(report.differences, new Set(cardIds), new Set(moneyCards)),
  };
  log(`R1: ${JSON.stringify(result1)}`);
  await client.close();
  return result1;
}

/** Counts differences by kind and by whose card it is: one the load moved money on, another of the N, or one the load issued. */
function whereDifferencesAre(differences: Array<{ kind: string; ids: Record<string, string> }>, made: ReadonlySet<string>, moneyCards: ReadonlySet<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of differences) {
    const whose = moneyCards.has(d.ids.cardId) ? 'money card' : made.has(d.ids.cardId) ? 'the N' : 'issued by the load';
    const key = `${d.kind} (${whose})`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** Answers 429 per endpoint between two snapshots of the sandbox's counters (from the start when `from` is undefined); endpoints with none left out. */
function rejected(from: Stats | undefined, to: Stats): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, s] of Object.entries(to)) {
    const n = (s.byStatus['429'] ?? 0) - (from?.[key]?.byStatus['429'] ?? 0);
    if (n > 0) out[key] = n;
  }
  return out;
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

async function makeCards(stack: BenchStack, count: number): Promise<string[]> {
  const provider = createProviderClient(stack.config('bench').provider);
  try {
    const made = await mapLimit(Array.from({ length: count }, (_, i) => i), 16, () => provider.createCard({ cardBinId: 'bin_visa_basic', initialAmount: 1_000, firstName: 'Recon', lastName: 'Card' }));
    return made.map((card) => card.cardId);
  } finally {
    await provider.close();
  }
}

/** A flow's call a reconciliation read was dispatched before: when (after the call was scheduled) and how long the call waited in all. */
interface Behind {
  phase: 'setup' | 'baseline' | 'beside' | 'tail';
  workflowId: string;
  afterMs: number;
  waitedMs: number;
}

const phaseOf = (at: number, p: Phases): Behind['phase'] => (at < p.loadFrom ? 'setup' : at < p.reconcileFrom ? 'baseline' : at < p.loadUntil ? 'beside' : 'tail');

interface Phases {
  windowMs: number;
  loadFrom: number;
  reconcileFrom: number;
  loadUntil: number;
}

const eventMs = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

/** When each of the reconciliation's card reads was dispatched (every run of its continue-as-new chain). */
async function reconcileReadStarts(stack: BenchStack, workflowId: string): Promise<number[]> {
  const temporal = stack.client();
  const starts: number[] = [];
  for await (const run of temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const scheduled = new Set<string>();
    for (const e of (await temporal.workflow.getHandle(workflowId, run.runId).fetchHistory()).events ?? []) {
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'reconcileReadCard') scheduled.add(String(e.eventId));
      if (scheduled.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId))) starts.push(eventMs(e));
    }
  }
  return starts.sort((x, y) => x - y);
}

/**
 * How long the flows' GET /cards/{id} calls (issuing's polls, the money cards' balance reads) waited
 * to start, p99 by the phase they were scheduled in, from the histories of the card workflows the
 * load used; and how many of them a reconciliation read went before (dispatched while the flow's
 * call was already waiting).
 */
async function callWaits(stack: BenchStack, queue: string, moneyCards: string[], phases: Phases, reconcileStarts: number[]): Promise<R1Result['waits']> {
  const temporal = stack.client();
  const ids = new Set(moneyCards.map((cardId) => entityWorkflowId('card', cardId)));
  const query = `WorkflowType = 'cardLifecycle' AND TaskQueue = '${entityQueue(queue)}' AND StartTime >= '${new Date(phases.loadFrom).toISOString()}'`;
  for await (const wf of temporal.workflow.list({ query })) {
    if (ids.size >= 400) break;
    ids.add(wf.workflowId);
  }
  const waits = { baseline: [] as number[], beside: [] as number[] };
  // By the window each call was scheduled in (from the baseline's first): a drift of the load shows as a trend within a phase.
  const byWindow: number[][] = [];
  const behind: Behind[] = [];
  let cutByStop = 0;
  await mapLimit([...ids], 8, async (workflowId) => {
    const scheduled = new Map<string, number>();
    for (const e of (await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? []) {
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'getCard') scheduled.set(String(e.eventId), eventMs(e));
      const started = e.activityTaskStartedEventAttributes;
      const from = scheduled.get(String(started?.scheduledEventId));
      // A later attempt's start comes after the earlier attempts and their backoff: not a wait for dispatch.
      if (from === undefined || (started?.attempt ?? 1) > 1) continue;
      const to = eventMs(e);
      // Still waiting when the load stopped: its wait spans the stop (and the tail's worker restart), not reconciliation.
      if (from < phases.loadUntil && to >= phases.loadUntil) {
        cutByStop++;
        continue;
      }
      if (from >= phases.loadFrom && from < phases.reconcileFrom) waits.baseline.push(to - from);
      if (from >= phases.reconcileFrom && from < phases.loadUntil) waits.beside.push(to - from);
      if (from >= phases.loadFrom && from < phases.loadUntil) (byWindow[Math.floor((from - phases.loadFrom) / phases.windowMs)] ??= []).push(to - from);
      const overtaking = reconcileStarts.find((r) => r > from && r < to);
      if (overtaking !== undefined) behind.push({ phase: phaseOf(from, phases), workflowId, afterMs: overtaking - from, waitedMs: to - from });
    }
  });
  log(`R1: GET /cards waits sampled from ${ids.size} card workflows: ${waits.baseline.length} baseline, ${waits.beside.length} beside reconciliation, ${cutByStop} still waiting when the load stopped (left out)`);
  const p99 = (xs: number[]) => (xs.length ? percentile(xs, 99) : Number.NaN);
  return {
    p99: { baseline: p99(waits.baseline), withReconcile: p99(waits.beside) },
    samples: { baseline: waits.baseline.length, withReconcile: waits.beside.length },
    p99PerWindow: Array.from(byWindow, (xs) => (xs ? p99(xs) : Number.NaN)),
    behindReconcile: behind.length,
    behind: behind.slice(0, 20),
    cutByStop,
  };
}
