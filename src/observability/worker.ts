/**
 * A worker process's runtime: the SDK's logs, the core's included, go to our structured logger
 * (sdk-logs.ts: JSON lines with the same redaction, repeats held back), and with METRICS_PORT the SDK's
 * Prometheus exporter (schedule-to-start latency, slots, sticky cache, …) is served behind
 * our own provider metrics, with liveness and readiness.
 */
import { Client, Connection } from '@temporalio/client';
import { Runtime } from '@temporalio/worker';
import type { Registry } from 'prom-client';
import type { Config } from '../config';
import type { Logger } from '../logging';
import type { ProviderCallObserver } from '../provider/transport';
import { createDataConverter } from '../codec/payload-codec';
import { OUTCOME_UNKNOWN_FLOWS } from '../shared/outcome-unknown';
import { clientConnectionOptions } from '../temporal/connection';
import { unsettledOutcomes } from '../temporal/settlements';
import { listOpenItems } from '../temporal/open-items';
import { consecutiveFailures } from '../temporal/reconciliation-runs';
import { freePort } from '../ports';
import { createRegistry, openItemMetrics, outcomeUnknownMetrics, providerMetrics, reconciliationFailureMetrics, reconciliationMetrics, type ReconciliationMetrics } from './metrics';
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
  visibilityGauges(registry, config, connection, log);
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

/** How long one read of the unsettled flows or open items may take, its visibility pages together. */
const VISIBILITY_READ_DEADLINE_MS = 10_000;

/**
 * The gauges read from Temporal's visibility, over the process's one lazy connection (with our codec:
 * visibility answers carry memos): outcome_unknown_unsettled (the unsettled OutcomeUnknown flows of
 * its main task queue from before open items), open_items and open_item_oldest_age_seconds (its open
 * items), reconciliation_consecutive_failures (its reconciliations' latest runs). A failed read is logged once, the figures kept (metrics.ts visibilityRead).
 */
function visibilityGauges(registry: Registry, config: Config, connection: Connection, log: Logger): void {
  const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec) });
  const { taskQueue } = config.temporal;
  const within = <T>(read: () => Promise<T>) => connection.withDeadline(Date.now() + VISIBILITY_READ_DEADLINE_MS, read);
  const failed = (what: string, gauge: string) => (err: unknown) =>
    log.warn(`could not read ${what} from Temporal: ${gauge} keeps its last figures`, { taskQueue, error: (err as Error).message });
  outcomeUnknownMetrics(registry, {
    read: () => within(() => unsettledOutcomes(client, taskQueue)),
    kinds: OUTCOME_UNKNOWN_FLOWS,
    onReadFailed: failed('the unsettled OutcomeUnknown flows', 'outcome_unknown_unsettled'),
  });
  openItemMetrics(registry, {
    read: () => within(() => listOpenItems(client, taskQueue)),
    kinds: OUTCOME_UNKNOWN_FLOWS,
    onReadFailed: failed('the open items', 'open_items'),
  });
  reconciliationFailureMetrics(registry, {
    read: () => within(() => consecutiveFailures(client, taskQueue)),
    onReadFailed: failed("the reconciliations' latest runs", 'reconciliation_consecutive_failures'),
  });
}
