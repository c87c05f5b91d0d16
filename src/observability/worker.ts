/**
 * A worker process's runtime: the SDK's logger goes to our structured logger (so workflow and
 * activity logs are JSON lines with the same redaction), and with METRICS_PORT the SDK's
 * Prometheus exporter (schedule-to-start latency, slots, sticky cache, …) is served behind
 * our own provider metrics, with liveness and readiness.
 */
import { Connection } from '@temporalio/client';
import { DefaultLogger, Runtime, type LogLevel as SdkLogLevel } from '@temporalio/worker';
import type { Config } from '../config';
import type { Logger } from '../logging';
import type { ProviderCallObserver } from '../provider/transport';
import { connectionOptions } from '../temporal/connection';
import { freePort } from '../ports';
import { createRegistry, providerMetrics, reconciliationMetrics, type ReconciliationMetrics } from './metrics';
import { startObservabilityServer, temporalReachable } from './server';

const SDK_LEVEL: Record<Config['logLevel'], SdkLogLevel> = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' };

export interface WorkerObservability {
  url?: string;
  providerObserver?: ProviderCallObserver;
  /** What reconciliation runs found: reconciliation_differences{kind}, flows_stuck{flow_kind}. */
  reconciliation?: ReconciliationMetrics;
  close(): Promise<void>;
}

/** Installs the SDK Runtime (once per process) and, with METRICS_PORT, serves /metrics, /health and /ready. */
export async function startWorkerObservability(config: Config, log: Logger): Promise<WorkerObservability> {
  const sdkPort = config.metricsPort === undefined ? undefined : await freePort('127.0.0.1');
  Runtime.install({
    logger: new DefaultLogger(SDK_LEVEL[config.logLevel], (entry) => {
      const level = entry.level === 'TRACE' || entry.level === 'DEBUG' ? 'debug' : entry.level === 'INFO' ? 'info' : entry.level === 'WARN' ? 'warn' : 'error';
      log[level](entry.message, entry.meta);
    }),
    ...(sdkPort === undefined ? {} : { telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${sdkPort}` } } } }),
  });
  if (config.metricsPort === undefined) return { close: async () => undefined };

  const registry = createRegistry();
  const connection = Connection.lazy(connectionOptions(config.temporal));
  const server = await startObservabilityServer({
    port: config.metricsPort,
    host: config.listenHost,
    registry,
    ready: temporalReachable(connection),
    sdkMetricsUrl: `http://127.0.0.1:${sdkPort}/metrics`,
  });
  return {
    url: server.url,
    providerObserver: providerMetrics(registry),
    reconciliation: reconciliationMetrics(registry),
    close: async () => {
      await server.close();
      await connection.close();
    },
  };
}
