/** `npm run worker`: the workers of this process, until SIGINT/SIGTERM (the SDK drains them gracefully). */
import { loadConfigOrExit } from './config';
import { processLogger } from './logging';
import { startTracing } from './observability/tracing';
import { startWorkerObservability } from './observability/worker';
import { createWorkers } from './temporal/workers';
import { applySchedulesOnce } from './temporal/schedules';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const log = processLogger('worker', config);
  if (config.codec.isDevelopmentKey) log.warn('PAYLOAD_CODEC_KEY is not set; using the development key');
  const ops = await startWorkerObservability(config, log);
  const tracing = startTracing(config.tracing, 'card-issuing-worker');
  const fleet = await createWorkers({ config, providerObserver: ops.providerObserver, reconciliationMetrics: ops.reconciliation, workflowBundlePath: config.workflowBundlePath, tracing });
  if (config.schedules) log.info('reconciliation schedules applied', await applySchedulesOnce(config));
  log.info('polling', {
    temporalAddress: config.temporal.address,
    namespace: config.temporal.namespace,
    taskQueues: fleet.workers.map((w) => w.options.taskQueue),
    metrics: ops.url,
    traces: tracing?.serviceName,
  });
  await fleet.run();
  await ops.close();
  await tracing?.shutdown();
}

main().catch((err) => {
  process.stderr.write(`worker: ${(err as Error).message}\n`);
  process.exit(1);
});
