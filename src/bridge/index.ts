/** Starts the bridge on a port (0 = ephemeral) with its own Temporal client; used by `npm run bridge`, the demo and tests. */
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';
import { createDataConverter } from '../codec/payload-codec';
import { HmacSha256Scheme, NonceCache } from '../provider/signing';
import type { Logger } from '../logging';
import { clientConnectionOptions } from '../temporal/connection';
import { bridgeMetrics, createRegistry } from '../observability/metrics';
import { startObservabilityServer, temporalReachable } from '../observability/server';
import type { Tracing } from '../observability/tracing';
import { buildBridge } from './app';

/**
 * gRPC waits out a growing reconnect backoff (up to 2 minutes) after the server went away; the
 * provider redelivers only 8 times, so the bridge retries its connection at least every second.
 */
const FAST_RECONNECT = {
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.min_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 1000,
};

export interface RunningBridge {
  url: string;
  port: number;
  /** /metrics, /health and /ready, when a metrics port was given. */
  opsUrl?: string;
  close(): Promise<void>;
}

export interface BridgeStartOptions {
  port?: number;
  host?: string;
  logger?: Logger;
  metricsPort?: number;
  /** The process's tracing: a server span per webhook, parent of the signal-with-start's span. */
  tracing?: Tracing;
}

export async function startBridge(config: Config, opts: BridgeStartOptions = {}): Promise<RunningBridge> {
  // lazy: the bridge must start (and answer 503) even while Temporal is down.
  const connection = Connection.lazy({ ...clientConnectionOptions(config.temporal), channelArgs: FAST_RECONNECT });
  const temporal = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: createDataConverter(config.codec),
    interceptors: opts.tracing?.clientInterceptors(),
  });
  const verifier = new HmacSha256Scheme({
    apiKey: config.provider.apiKey,
    secret: config.provider.webhookSecret,
    toleranceMs: config.bridge.timestampToleranceMs,
  });
  const nonces = new NonceCache(config.bridge.timestampToleranceMs);
  const metricsPort = opts.metricsPort ?? config.metricsPort;
  const registry = metricsPort === undefined ? undefined : createRegistry();
  const metrics = registry && bridgeMetrics(registry);
  const app = buildBridge({ temporal, taskQueue: config.temporal.taskQueue, verifier, nonces, logger: opts.logger, signedPath: config.bridge.signedPath, metrics, tracer: opts.tracing?.tracer });
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ port: opts.port ?? config.bridge.port, host });
  const port = (app.server.address() as { port: number }).port;
  const ops =
    registry && metricsPort !== undefined
      ? await startObservabilityServer({ port: metricsPort, host, registry, ready: temporalReachable(connection) })
      : undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    opsUrl: ops?.url,
    close: async () => {
      await ops?.close();
      await app.close(); // finishes requests in flight
      await connection.close();
    },
  };
}
