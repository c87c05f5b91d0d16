/**
 * A worker process's runtime: the SDK's logs, the core's included, go to our structured logger
 * (sdk-logs.ts: JSON lines with the same redaction, repeats held back), and with METRICS_PORT the SDK's
 * Prometheus exporter (schedule-to-start latency, slots, sticky cache, …) is served behind
 * our own provider metrics, with liveness and readiness.
 */
import { Connection } from '@temporalio/client';
import { Runtime } from '@temporalio/worker';
import type { Config } from '../config';
import type { Logger } from '../logging';
import type { ProviderCallObserver } from '../provider/transport';
import { clientConnectionOptions } from '../temporal/connection';
import { freePort } from '../ports';
import { createRegistry, providerMetrics, reconciliationMetrics, type ReconciliationMetrics } from './metrics';
import { forwardSdkLogs } from './sdk-logs';
import { startObservabilityServer, temporalReachable } from './server';

export interface WorkerObservability {
  url?: string;
  providerObserver?: ProviderCallObserver;
  /** What reconciliation runs found: reconciliation_differences{reconciliation,kind}, flows_stuck{flow_kind}, reconciliation_last_run_timestamp_seconds{reconciliation}. */
  reconciliation?: ReconciliationMetrics;
  close(): Promise<void>;
}

/** Installs the SDK Runtime (once per process) and, with METRICS_PORT, serves /metrics, /health and /ready. */
export async function startWorkerObservability(config: Config, log: Logger): Promise<WorkerObservability> {
  const sdkPort = config.metricsPort === undefined ? undefined : await freePort('127.0.0.1');
  // One lazy connection (no call until asked) answers readiness and whether an outage is over.
  const connection = Connection.lazy(clientConnectionOptions(config.temporal));
  const reachable = temporalReachable(connection);
  const sdkLogs = forwardSdkLogs(log, config.logLevel, { temporalAddress: config.temporal.address, probe: reachable });
  Runtime.install({
    logger: sdkLogs.logger,
    telemetryOptions: {
      logging: sdkLogs.logging,
      ...(sdkPort === undefined ? {} : { metrics: { prometheus: { bindAddress: `127.0.0.1:${sdkPort}` } } }),
    },
  });
  const closeLogs = async () => {
    sdkLogs.flush();
    await connection.close();
  };
  if (config.metricsPort === undefined) return { close: closeLogs };

  const registry = createRegistry();
  const server = await startObservabilityServer({
    port: config.metricsPort,
    host: config.listenHost,
    registry,
    ready: reachable,
    sdkMetricsUrl: `http://127.0.0.1:${sdkPort}/metrics`,
  });
  return {
    url: server.url,
    providerObserver: providerMetrics(registry),
    reconciliation: reconciliationMetrics(registry),
    close: async () => {
      await server.close();
      await closeLogs();
    },
  };
}
