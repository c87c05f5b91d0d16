/**
 * P4: onboardCardholder flows parked on their KYC review on one worker. Memory per parked flow
 * (the worker process's resident set, before and after: workflows run in a worker thread whose
 * V8 heap the main thread's heap figure does not include) against the same number of bare
 * workflows parked on a signal on an identical worker; then decision → completion for up to
 * 1,000 flows of the first half while they are cached, and as many of the second half after a
 * worker restart evicted them all; the rest are decided faster, unmeasured, and must complete too.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { WorkflowHandle } from '@temporalio/client';
import { sampleKycForm, writeSampleDocuments } from '../src/sandbox/kyc-samples';
import { createCardIssuingClient } from '../src/starter/connect';
import { entityQueue } from '../src/shared/task-queues';
import { log, mapLimit, paced, percentile, round, sleep, until } from './lib';
import { uniqueQueue, type BenchStack, type WorkerMode, type WorkerProcess } from './stack';

/** Well within what one worker completes on a shared 2-core machine: the latency measured is a flow's, not a queue's. */
const DECISIONS_PER_SECOND = 4;
/** Decisions whose latency is measured per phase; the others follow unmeasured, faster, and must complete too. */
const MEASURED_DECISIONS = 1000;
const UNMEASURED_DECISIONS_PER_SECOND = 40;
/** A review that never comes by itself, and no polling while the flows wait for it. */
const TIMINGS = { webhookWaitMs: 3 * 3_600_000, pollInitialIntervalMs: 60_000, pollMaxIntervalMs: 600_000, deadlineMs: 6 * 3_600_000 };

interface Phase {
  p50: number;
  p99: number;
  count: number;
}

export interface P4Result {
  flows: number;
  /** Resident set growth per parked flow (KB): the measure. */
  flowRssKb: number;
  bareRssKb: number;
  memoryRatio: number;
  /** The bare workflow with the provider's request rules in its bundle: what those modules cost per workflow. */
  bareWithSchemasRssKb: number;
  /** The bare workflow with every project workflow module in its bundle: what our module graph costs per workflow. */
  bareWithProjectRssKb: number;
  /** The workflow threads' V8 heap growth per parked flow, after a full collection in each thread (KB). */
  flowThreadHeapKb: number;
  bareThreadHeapKb: number;
  threadHeapRatio: number;
  /** Context: the main thread's V8 heap growth per flow (the workflows' own heap is in their thread). */
  flowMainHeapKb: number;
  bareMainHeapKb: number;
  cached: Phase;
  evicted: Phase;
  p99Ratio: number;
  completed: number;
  completedRatio: number;
}

export async function runP4(stack: BenchStack, flows: number): Promise<P4Result> {
  const cache = { BENCH_MAX_CACHED: String(flows * 2 + 100) };
  const bare = await parkBare(stack, flows, cache, 'bare', 'bareParked');
  const withSchemas = await parkBare(stack, flows, cache, 'bare-schemas', 'bareParkedWithSchemas');
  const withProject = await parkBare(stack, flows, cache, 'bare-project', 'bareParked');

  await stack.control.reset();
  await stack.control.configure({ kycReviewMs: 3_600_000, rateLimit: { general: 1_000_000, sensitive: 1_000_000, balance: 1_000_000 } });
  const queue = uniqueQueue('p4');
  await stack.bridge(queue);
  let worker = await stack.worker('fleet', queue, cache);
  const client = await createCardIssuingClient(stack.config(queue));
  const docs = writeSampleDocuments();
  try {
    const before = await worker.memory();
    log(`P4 onboardCardholder: parking ${flows} flows`);
    await mapLimit(
      Array.from({ length: flows }, (_, i) => i),
      32,
      async () => (await client.startOnboardCardholder({ ...sampleKycForm(docs.documents, { timings: TIMINGS }), idempotencyKey: randomUUID() })).workflowId,
    );
    const kycIds = await until(
      'every flow waiting for its review',
      async () => {
        const ids = await entityIds(stack, queue);
        return ids.length >= flows ? ids : undefined;
      },
      flows * 1000 + 60_000,
      2000,
    );
    await sleep(3000);
    const after = await worker.memory();
    const flowKb = (after.heapUsed - before.heapUsed) / 1024 / flows;
    const flowRssKb = (after.rss - before.rss) / 1024 / flows;
    const flowThreadKb = (after.threadsHeapUsed - before.threadsHeapUsed) / 1024 / flows;
    log(`P4 onboardCardholder: ${flowRssKb.toFixed(0)} KB resident, ${flowThreadKb.toFixed(0)} KB of workflow-thread heap per parked flow (bare ${bare.rssKb.toFixed(0)}, ${bare.threadKb.toFixed(0)})`);

    const half = Math.floor(kycIds.length / 2);
    const sample = Math.min(half, MEASURED_DECISIONS);
    const cached = await decide(stack, queue, kycIds.slice(0, sample), 'cached');
    await worker.stop();
    worker = await stack.worker('fleet', queue, cache);
    // A restart is how every flow gets evicted at once; its own start-up is not what is measured.
    await sleep(Number(process.env.BENCH_P4_SETTLE_MS ?? 15_000));
    const evicted = await decide(stack, queue, kycIds.slice(half, half + sample), 'evicted');
    const rest = [...kycIds.slice(sample, half), ...kycIds.slice(half + sample)];
    if (rest.length > 0) await decide(stack, queue, rest, 'unmeasured', UNMEASURED_DECISIONS_PER_SECOND);
    const completed = await closedCount(stack, queue);
    return {
      flows,
      flowRssKb: round(flowRssKb, 1),
      bareRssKb: round(bare.rssKb, 1),
      memoryRatio: round(flowRssKb / bare.rssKb),
      bareWithSchemasRssKb: round(withSchemas.rssKb, 1),
      bareWithProjectRssKb: round(withProject.rssKb, 1),
      flowThreadHeapKb: round(flowThreadKb, 1),
      bareThreadHeapKb: round(bare.threadKb, 1),
      threadHeapRatio: round(flowThreadKb / bare.threadKb),
      flowMainHeapKb: round(flowKb, 1),
      bareMainHeapKb: round(bare.kb, 1),
      cached,
      evicted,
      p99Ratio: round(evicted.p99 / cached.p99),
      completed,
      completedRatio: round(completed / flows),
    };
  } finally {
    await worker.stop();
    await client.close();
    rmSync(docs.dir, { recursive: true, force: true });
  }
}

/** The baseline: `flows` bare workflows parked on a signal; KB of heap per workflow. */
async function parkBare(stack: BenchStack, flows: number, env: Record<string, string>, mode: WorkerMode, workflowType: string): Promise<{ kb: number; rssKb: number; threadKb: number }> {
  const queue = uniqueQueue('p4-bare');
  const worker: WorkerProcess = await stack.worker(mode, queue, env);
  const before = await worker.memory();
  log(`P4 ${workflowType} (${mode}): parking ${flows} workflows`);
  const handles = await mapLimit(
    Array.from({ length: flows }, (_, i) => i),
    32,
    (i) => stack.client().workflow.start(workflowType, { taskQueue: queue, workflowId: `${queue}-${i}`, args: [] }),
  );
  await until('every bare workflow parked', async () => ((await allParked(handles)) ? true : undefined), flows * 1000 + 60_000, 1000);
  await sleep(3000);
  const after = await worker.memory();
  await worker.stop();
  const kb = (after.heapUsed - before.heapUsed) / 1024 / flows;
  const rssKb = (after.rss - before.rss) / 1024 / flows;
  const threadKb = (after.threadsHeapUsed - before.threadsHeapUsed) / 1024 / flows;
  log(`P4 ${workflowType} (${mode}): ${rssKb.toFixed(0)} KB resident, ${threadKb.toFixed(0)} KB of workflow-thread heap per workflow`);
  return { kb, rssKb, threadKb };
}

/** Parked: the first workflow task completed and nothing is pending. */
async function allParked(handles: WorkflowHandle[]): Promise<boolean> {
  const states = await mapLimit(handles, 32, async (h) => {
    const d = await h.describe();
    return d.historyLength >= 3 && d.raw.pendingWorkflowTask == null;
  });
  return states.every(Boolean);
}

/** The KYC ids whose entity workflows exist (one per parked flow, started when it subscribed). */
async function entityIds(stack: BenchStack, queue: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of stack.client().workflow.list({ query: `TaskQueue = '${entityQueue(queue)}' AND WorkflowType = 'providerEntity' AND ExecutionStatus = 'Running'` })) {
    ids.push(wf.workflowId.slice(wf.workflowId.lastIndexOf('/') + 1));
  }
  return ids;
}

async function closedCount(stack: BenchStack, queue: string): Promise<number> {
  const { count } = await stack.client().workflow.count(`TaskQueue = '${queue}' AND WorkflowType = 'onboardCardholder' AND ExecutionStatus = 'Completed'`);
  return count;
}

/** Approves `ids` at a steady rate; decision → completion of the flow that waited for each. */
async function decide(stack: BenchStack, queue: string, ids: string[], label: string, perSecond = DECISIONS_PER_SECOND): Promise<Phase> {
  log(`P4 ${label}: ${ids.length} decisions at ${perSecond}/s`);
  const decidedAt = new Map<string, number>();
  const already = await closedCount(stack, queue);
  await paced(ids.length, perSecond, async (i) => {
    decidedAt.set(ids[i], Date.now());
    await stack.control.decideKyc(ids[i], 'APPROVED');
  });
  await until(`${label} flows completed`, async () => ((await closedCount(stack, queue)) >= already + ids.length ? true : undefined), 120_000 + ids.length * 500, 1000);
  const latencies: number[] = [];
  for await (const wf of stack.client().workflow.list({ query: `TaskQueue = '${queue}' AND WorkflowType = 'onboardCardholder' AND ExecutionStatus = 'Completed'` })) {
    const result = (await stack.client().workflow.getHandle(wf.workflowId, wf.runId).result()) as { id: string };
    const at = decidedAt.get(result.id);
    if (at !== undefined && wf.closeTime) latencies.push(wf.closeTime.getTime() - at);
  }
  const phase = { p50: round(percentile(latencies, 50), 1), p99: round(percentile(latencies, 99), 1), count: latencies.length };
  log(`P4 ${label}: decision → completion p50 ${phase.p50} p99 ${phase.p99} ms (${phase.count})`);
  return phase;
}
