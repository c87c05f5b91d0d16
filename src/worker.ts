/**
 * `npm run worker`: the workers of this process, until SIGINT/SIGTERM (the SDK drains them
 * gracefully). When the Temporal certificates change on disk, the workers drain and reconnect
 * with the new ones (temporal/certificate-watch.ts) instead of failing their next handshake.
 */
import { assertPinKeys, assertProviderTransport, loadConfigOrExit, requireSecrets } from './config';
import { watchCertificates } from './temporal/certificate-watch';
import { processLogger } from './logging';
import { startTracing } from './observability/tracing';
import { startWorkerObservability } from './observability/worker';
import { createWorkers, type WorkerFleet } from './fleet/workers';
import { applySchedulesOnce } from './temporal/schedules';

async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env, requireSecrets('PROVIDER_API_SECRET', 'PAYLOAD_CODEC_KEY', 'PIN_SEAL_PRIVATE_KEY', 'CARD_ACTION_TRUSTED_KEYS', 'SIGNAL_MAC_KEY'), assertProviderTransport, assertPinKeys);
  const log = processLogger('worker', config);
  if (config.developmentDefaults.length > 0) log.warn('development: these secrets take their public development defaults', { secrets: config.developmentDefaults });
  if (config.retiredSettings.length > 0) log.warn('these settings are retired and ignored: remove them, and delete the card-seal keys (CHANGELOG 2.0.0; docs/operations.md, "PIN keys")', { settings: config.retiredSettings });
  const ops = await startWorkerObservability(config, log);
  const tracing = startTracing(config.tracing, 'card-issuing-worker');
  let fleet: WorkerFleet | undefined;
  let reconnect = false;
  const stopWatching = watchCertificates(config.temporal, () => {
    log.info('Temporal certificates changed: draining the workers to reconnect with them');
    reconnect = true;
    fleet?.shutdown();
  });
  do {
    reconnect = false;
    fleet = await createWorkers({ config, providerObserver: ops.providerObserver, reconciliationMetrics: ops.reconciliation, workflowBundlePath: config.workflowBundlePath, tracing });
    if (config.schedules) log.info('reconciliation schedules applied', await applySchedulesOnce(config));
    log.info('polling', {
      temporalAddress: config.temporal.address,
      namespace: config.temporal.namespace,
      taskQueues: fleet.workers.map((w) => w.options.taskQueue),
      metrics: ops.url,
      traces: tracing?.serviceName,
      payloadKeyIds: [config.codec.keyId, ...Object.keys(config.codec.previousKeys ?? {})],
      // Public: what callers seal PINs to (PIN_SEAL_PUBLIC_KEY), logged so operators can hand it out.
      pinKey: { keyId: config.pin.keyId, publicKey: config.pin.publicKey, retiredKeyIds: Object.keys(config.pin.previousKeys ?? {}) },
    });
    await fleet.run();
  } while (reconnect);
  stopWatching();
  await ops.close();
  await tracing?.shutdown();
}

main().catch((err) => {
  process.stderr.write(`worker: ${(err as Error).message}\n`);
  process.exit(1);
});
