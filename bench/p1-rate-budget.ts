/**
 * P1: the provider budget used under sustained demand from 3 worker processes. issueCard flows
 * (POST /cards, then GET /cards/{id} polling: webhooks are dropped), fundCard and withdrawFromCard
 * flows are kept in flight well beyond what the limits allow, for several windows; the sandbox's
 * per-endpoint counters are read at each window boundary. The baseline is each endpoint's limit
 * per window. The third worker starts last and without the limit, as a misconfigured worker
 * would: under the queue-level limit it must not lift the fleet's rate.
 */
import { randomUUID } from 'node:crypto';
import { createCardIssuingClient } from '../src/starter/connect';
import { log, mapLimit, round, sleep, startMovementFlow } from './lib';
import { readyCards } from './cards';
import { uniqueQueue, type BenchStack, type WorkerProcess } from './stack';
import { entityQueue, rateClassQueue, type RateQueue } from '../src/shared/task-queues';
import { temporal } from '@temporalio/proto';

export const LIMITS = { general: 100, sensitive: 70, balance: 70 };
/** The endpoints the demand keeps busy, with their limit per window. */
const BUSY: Record<string, number> = { createCard: LIMITS.general, getCard: LIMITS.general, fundCard: LIMITS.balance, withdrawFromCard: LIMITS.balance };
/** The rate-limited queue behind each busy endpoint: a window counts as saturated when it never ran dry. */
const QUEUE_OF: Record<string, RateQueue> = { createCard: 'card-create', getCard: 'card-read', fundCard: 'funding', withdrawFromCard: 'withdrawal' };
const BACKLOG_SAMPLE_MS = 1000;
/** Demand offered, as a multiple of each endpoint's limit. */
const OVERLOAD = 1.2;
/** Issued cards stay CREATING this long, so issuing flows keep polling GET /cards/{id} beyond its budget. */
const PROVISIONING_MS = 15_000;
const TIMINGS = { webhookWaitMs: 300, pollInitialIntervalMs: 200, pollMaxIntervalMs: 500, deadlineMs: 30 * 60_000 };

export type Stats = Record<string, { requests: number; byStatus: Record<string, number> }>;

export interface P1Endpoint {
  limit: number;
  windows: number;
  perWindow: number[];
  /** Per window: whether the endpoint's queue had a backlog at every sample (demand never ran dry). */
  saturated: boolean[];
  /** Over the saturated windows: what the limiter achieves when there is demand to serve. */
  minRatio: number;
  meanRatio: number;
  /** Over every window, saturated or not. */
  minRatioAllWindows: number;
}

export interface P1Result {
  windowMs: number;
  windows: number;
  workers: string;
  endpoints: Record<string, P1Endpoint>;
  otherEndpoints: Record<string, number[]>;
  answers429: number;
  completedFlows: number;
  failedFlows: number;
  failures: string[];
}

export async function runP1(stack: BenchStack, windows: number, windowMs: number): Promise<P1Result> {
  await stack.control.reset();
  await stack.control.configure({ cardProvisioningMs: 0 });
  const moneyCards = await readyCards(stack, 10);
  await stack.control.configure({ cardProvisioningMs: PROVISIONING_MS, webhook: { dropRate: 1 }, rateLimit: { windowMs, ...LIMITS } });

  const queue = uniqueQueue('p1');
  const env = { PROVIDER_RATE_WINDOW_MS: String(windowMs) };
  const workers: WorkerProcess[] = [];
  workers.push(await stack.worker('fleet', queue, { ...env, BENCH_ENFORCE: '1' }));
  workers.push(await stack.worker('fleet', queue, { ...env, BENCH_ENFORCE: '1' }));
  // Last to poll, and without the limit: with a worker-set rate alone, it would lift it for all.
  workers.push(await stack.worker('fleet', queue, { ...env, BENCH_ENFORCE: '0' }));

  const client = await createCardIssuingClient(stack.config(queue));
  const outcome = { completed: 0, failed: 0, failures: [] as string[] };
  let running = true;
  const results: Promise<void>[] = [];
  /**
   * Open loop: flows start at `OVERLOAD` × the endpoint's rate whatever becomes of them, so each
   * queue keeps a backlog (a closed loop would let issuing, which waits on GET /cards, starve POST /cards).
   */
  const driver = (perSecond: number, start: () => Promise<{ result(): Promise<unknown> }>) =>
    (async () => {
      const began = Date.now();
      for (let i = 0; running; i++) {
        const wait = began + (i * 1000) / perSecond - Date.now();
        if (wait > 0) await sleep(wait);
        if (!running) return;
        results.push(
          start()
            .then((h) => h.result())
            .then(
              () => void outcome.completed++,
              (err: unknown) => {
                if (!running) return;
                outcome.failed++;
                if (outcome.failures.length < 5) outcome.failures.push((err as Error).message);
              },
            ),
        );
      }
    })();
  let n = 0;
  const card = () => moneyCards[n++ % moneyCards.length];
  const perSecond = (limit: number) => (OVERLOAD * limit * 1000) / windowMs;
  const lanes = [
    driver(perSecond(LIMITS.general), () => client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'Bench', lastName: 'Mark', timings: TIMINGS, idempotencyKey: randomUUID() })),
    driver(perSecond(LIMITS.balance), () => startMovementFlow(client, 'fundCard', { cardId: card(), amount: 100, timings: TIMINGS })),
    driver(perSecond(LIMITS.balance), () => startMovementFlow(client, 'withdrawFromCard', { cardId: card(), amount: 100, timings: TIMINGS })),
  ];

  // One window to reach the steady state, then the measured windows, read at each boundary.
  await sleep(untilBoundary(windowMs) + windowMs);
  const snapshots: Stats[] = [await stats(stack)];
  const dry: Array<Set<string>> = [];
  for (let w = 1; w <= windows; w++) {
    log(`P1 window ${w}/${windows} (${windowMs / 1000} s)`);
    const ranDry = new Set<string>();
    dry.push(ranDry);
    const end = Date.now() + untilBoundary(windowMs);
    while (Date.now() < end - BACKLOG_SAMPLE_MS) {
      for (const [endpoint, backlog] of Object.entries(await backlogs(stack, queue))) if (backlog === 0) ranDry.add(endpoint);
      await sleep(Math.min(BACKLOG_SAMPLE_MS, end - Date.now() - BACKLOG_SAMPLE_MS));
    }
    await sleep(Math.max(0, end - Date.now()));
    snapshots.push(await stats(stack));
  }
  running = false;
  const endpoints: Record<string, P1Endpoint> = {};
  const otherEndpoints: Record<string, number[]> = {};
  for (const key of Object.keys(snapshots[snapshots.length - 1])) {
    const perWindow = snapshots.slice(1).map((s, i) => served(s, key) - served(snapshots[i], key));
    if (BUSY[key] === undefined) {
      otherEndpoints[key] = perWindow;
      continue;
    }
    const ratios = perWindow.map((c) => c / BUSY[key]);
    const saturated = dry.map((d) => !d.has(key));
    const busy = ratios.filter((_, i) => saturated[i]);
    endpoints[key] = {
      limit: BUSY[key],
      windows: perWindow.length,
      perWindow,
      saturated,
      minRatio: busy.length ? round(Math.min(...busy)) : Number.NaN,
      meanRatio: busy.length ? round(busy.reduce((a, b) => a + b, 0) / busy.length) : Number.NaN,
      minRatioAllWindows: round(Math.min(...ratios)),
    };
  }
  const final = snapshots[snapshots.length - 1];
  const answers429 = Object.values(final).reduce((sum, s) => sum + (s.byStatus['429'] ?? 0), 0);
  log(`P1: ${JSON.stringify(Object.fromEntries(Object.entries(endpoints).map(([k, e]) => [k, e.perWindow.map((c, i) => `${c}${e.saturated[i] ? '' : ' (ran dry)'}`)])))}; 429s ${answers429}`);
  await stopFlows(stack, queue);
  await Promise.all(lanes);
  await Promise.all(results);
  for (const w of workers) await w.stop();
  await client.close();
  return {
    windowMs,
    windows,
    workers: '3 processes; the third without the limit, started last',
    endpoints,
    otherEndpoints,
    answers429,
    completedFlows: outcome.completed,
    failedFlows: outcome.failed,
    failures: outcome.failures,
  };
}

/** Requests the provider served (every answer but 429) on an endpoint so far. */
export function served(s: Stats, key: string): number {
  const e = s[key];
  return e ? e.requests - (e.byStatus['429'] ?? 0) : 0;
}

export function untilBoundary(windowMs: number): number {
  return windowMs - (Date.now() % windowMs);
}

/** The backlog of each busy endpoint's queue, as the server reports it. */
async function backlogs(stack: BenchStack, queue: string): Promise<Record<string, number>> {
  const service = stack.client().connection.workflowService;
  const out: Record<string, number> = {};
  for (const [endpoint, rateQueue] of Object.entries(QUEUE_OF)) {
    const answer = await service.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: rateClassQueue(queue, rateQueue) },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      reportStats: true,
    });
    out[endpoint] = Number(answer.stats?.approximateBacklogCount ?? 0);
  }
  return out;
}

async function stats(stack: BenchStack): Promise<Stats> {
  return stack.control.stats();
}

/** Ends what is still running: demand was deliberately beyond the budget, so a backlog remains. */
export async function stopFlows(stack: BenchStack, queue: string): Promise<void> {
  const temporal = stack.client();
  const running: Array<{ workflowId: string; runId: string }> = [];
  for await (const wf of temporal.workflow.list({ query: `(TaskQueue = '${queue}' OR TaskQueue = '${entityQueue(queue)}') AND ExecutionStatus = 'Running'` })) running.push(wf);
  log(`P1: terminating the ${running.length} workflows still running`);
  await mapLimit(running, 32, (wf) => temporal.workflow.getHandle(wf.workflowId, wf.runId).terminate('bench over').catch(() => undefined));
}
