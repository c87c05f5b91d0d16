/**
 * A worker in a process of its own, so that its memory and CPU are its own: `fleet` is the
 * project's workers (src/fleet/workers.ts), `bare` a worker of the bench's baseline workflows.
 * `bare-schemas` the same with the provider's request rules (src/provider-api) in the bundle, `bare-project` with every
 * project workflow module in it.
 * The parent configures it through the environment (CONTRACTS §2) and asks for its memory over IPC.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../src/config';
import { createWorkers } from '../src/fleet/workers';
import { connectionOptions } from '../src/temporal/connection';
import { ThreadHeaps } from './thread-heaps';
import { randomUUID } from 'node:crypto';
import { createProviderClient } from '../src/provider/client';
import { createDataConverter } from '../src/codec/payload-codec';
import { WorkflowClient, type ListOptions } from '@temporalio/client';
import type { BareFunding } from './workflows';

const BARE_BUNDLES: Record<string, string> = {
  bare: './workflows',
  'bare-schemas': './workflows-with-schemas',
  'bare-project': './workflows-with-project',
};

export interface MemoryReport {
  rss: number;
  heapUsed: number;
  external: number;
  /** V8 heap used by the worker threads (the workflows'), after a full collection in each. */
  threadsHeapUsed: number;
}

const threads = new ThreadHeaps();

/** What the activities of this process asked of visibility (P3's breakdown): list calls and the time to read each to its end. */
export interface VisibilityCounters {
  lists: number;
  listMs: number;
  /** `client.workflow.count` calls (a count before the list, where a lookup asks one) and their time. */
  counts: number;
  countMs: number;
}
const visibility: VisibilityCounters = { lists: 0, listMs: 0, counts: 0, countMs: 0 };

/** Counts every `client.workflow.list` and `count` this process makes (the earlier-run lookups of the money activities). */
function countVisibilityLists(): void {
  const originalCount = WorkflowClient.prototype.count;
  WorkflowClient.prototype.count = async function count(this: WorkflowClient, query?: string) {
    visibility.counts++;
    const began = performance.now();
    try {
      return await originalCount.call(this, query);
    } finally {
      visibility.countMs += performance.now() - began;
    }
  };
  const original = WorkflowClient.prototype.list;
  WorkflowClient.prototype.list = function list(this: WorkflowClient, options?: ListOptions) {
    const iterable = original.call(this, options);
    visibility.lists++;
    const began = performance.now();
    return {
      ...iterable,
      async *[Symbol.asyncIterator]() {
        try {
          yield* iterable;
        } finally {
          visibility.listMs += performance.now() - began;
        }
      },
    };
  };
}

/** After a full garbage collection in every thread, workflow threads included. */
async function memory(): Promise<MemoryReport> {
  const threadsHeapUsed = await threads.collect();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, threadsHeapUsed };
}

async function main(): Promise<void> {
  // The bench overloads workers on purpose: core's warnings (slow workflow tasks) are expected there.
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } } });
  const config = loadConfig();
  const mode = process.env.BENCH_WORKER_MODE;
  const cache = process.env.BENCH_MAX_CACHED ? { maxCachedWorkflows: Number(process.env.BENCH_MAX_CACHED) } : {};
  let run: Promise<void>;
  let shutdown: () => void;
  if (mode === 'fleet') {
    countVisibilityLists();
    const preloadModules = process.env.BENCH_PRELOAD === "0" ? [] : undefined;
    const fleet = await createWorkers({ config, enforceRateBudget: process.env.BENCH_ENFORCE === "1", preloadModules, ...cache });
    run = fleet.run();
    shutdown = fleet.shutdown;
  } else {
    const provider = createProviderClient(config.provider);
    const connection = await NativeConnection.connect(connectionOptions(config.temporal));
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      workflowsPath: require.resolve(BARE_BUNDLES[mode ?? 'bare'] ?? './workflows'),
      // P3's control with our payload codec and failure converter: what the rule that history holds only ciphertext costs.
      ...(process.env.BENCH_CODEC === '1' ? { dataConverter: createDataConverter(config.codec) } : {}),
      activities: {
        noop: async () => undefined,
        // P3's control: the provider call fundCard makes, through the same client, under a fresh key per flow.
        // The card comes in the environment: the bare workers run without the payload codec, so no argument.
        fundOnce: async () => void (await provider.fundCard(process.env.BENCH_CARD_ID ?? '', { amount: 100 }, { idempotencyKey: randomUUID() })),
        // P5's baseline: the card update's provider call, under the caller's key.
        fundUnderKey: async (f: BareFunding) => ({ operationId: (await provider.fundCard(f.cardId, { amount: f.amount }, { idempotencyKey: f.idempotencyKey })).operationId }),
      },
      ...cache,
    });
    run = worker.run().finally(() => connection.close());
    shutdown = () => worker.shutdown();
  }
  process.on('message', (msg: { type: string }) => {
    if (msg.type === 'memory') void memory().then((m) => process.send?.({ type: 'memory', memory: m }));
    if (msg.type === 'counters') process.send?.({ type: 'counters', counters: { ...visibility } });
    if (msg.type === 'stop') shutdown();
  });
  // The bench went away without saying so: do not outlive it.
  process.once('disconnect', () => shutdown());
  process.send?.({ type: 'ready', memory: await memory() });
  await run;
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench worker: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
