/**
 * The workers of one process: the main task queue (workflows, and activities that only talk
 * to Temporal) and one queue per provider rate class, each with a server-side activity rate
 * so that every worker of the fleet together stays under the provider's limits
 * (docs/rate-budget.md). Activities are built once, here, from their dependencies.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config';
import { createActivities } from '../activities';
import { createDataConverter } from '../codec/payload-codec';
import { ValueSealer } from '../codec/sealed-value';
import { BinCache } from '../provider/bin-cache';
import { createProviderClient } from '../provider/client';
import type { CardBinAnswer } from '../provider/answers';
import { RATE_CLASSES, RATE_CLASS_LIMITS, rateClassQueue } from '../shared/task-queues';
import { connectionOptions } from './connection';

/** Stay this far under the provider's limit: other clients of the same project share it. */
const RATE_SAFETY = 0.9;

export interface WorkerSetup {
  config: Config;
  /** Defaults to config.temporal.taskQueue; tests use one per test. */
  taskQueue?: string;
  /** A prebuilt bundle (tests build one per run); otherwise the worker bundles src/workflows. */
  workflowBundlePath?: string;
  /** Whether to set maxTaskQueueActivitiesPerSecond on the rate-class queues (default true). */
  enforceRateBudget?: boolean;
}

export interface WorkerFleet {
  workers: Worker[];
  run(): Promise<void>;
  shutdown(): void;
}

export async function createWorkers(setup: WorkerSetup): Promise<WorkerFleet> {
  const { config } = setup;
  const taskQueue = setup.taskQueue ?? config.temporal.taskQueue;
  const native = await NativeConnection.connect(connectionOptions(config.temporal));
  const connection = await Connection.connect(connectionOptions(config.temporal));
  const dataConverter = createDataConverter(config.codec);
  const provider = createProviderClient(config.provider);
  const activities = createActivities({
    provider,
    bins: new BinCache<CardBinAnswer>(provider),
    temporal: new Client({ connection, namespace: config.temporal.namespace, dataConverter }),
    sealer: new ValueSealer(config.codec),
  });
  const common: Partial<WorkerOptions> = { connection: native, namespace: config.temporal.namespace, dataConverter, activities };
  const workflows: Partial<WorkerOptions> = setup.workflowBundlePath
    ? { workflowBundle: { codePath: setup.workflowBundlePath } }
    : { workflowsPath: require.resolve('../workflows') };

  const workers = await Promise.all([
    Worker.create({ ...common, ...workflows, taskQueue }),
    ...RATE_CLASSES.map((rateClass) =>
      Worker.create({
        ...common,
        taskQueue: rateClassQueue(taskQueue, rateClass),
        maxTaskQueueActivitiesPerSecond:
          setup.enforceRateBudget === false ? undefined : (RATE_CLASS_LIMITS[rateClass] / (config.provider.rateWindowMs / 1000)) * RATE_SAFETY,
      }),
    ),
  ]);
  return {
    workers,
    run: async () => {
      try {
        await Promise.all(workers.map((w) => w.run()));
      } finally {
        await provider.close();
        await connection.close();
        await native.close();
      }
    },
    shutdown: () => workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown()),
  };
}
