/** Starts the bridge on a port (0 = ephemeral) with its own Temporal client; used by `npm run bridge`, the demo and tests. */
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';
import { createDataConverter } from '../codec/payload-codec';
import { HmacSha256Scheme, NonceCache } from '../provider/signing';
import type { Logger } from '../logging';
import { watchCertificates } from '../temporal/certificate-watch';
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

/** A webhook in flight finishes on the client it started with: its deadline is 5 s. */
const OLD_CONNECTION_GRACE_MS = 10_000;

export async function startBridge(config: Config, opts: BridgeStartOptions = {}): Promise<RunningBridge> {
  const connect = () => {
    // lazy: the bridge must start (and answer 503) even while Temporal is down.
    const connection = Connection.lazy({ ...clientConnectionOptions(config.temporal), channelArgs: FAST_RECONNECT });
    const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec, { signalMac: config.signalMac }), interceptors: opts.tracing?.clientInterceptors() });
    return { connection, client };
  };
  let temporal = connect();
  // New certificates on disk: new webhooks go through a new connection, the old one closes once its requests are done.
  const stopWatching = watchCertificates(config.temporal, () => {
    const old = temporal.connection;
    temporal = connect();
    opts.logger?.info('Temporal certificates changed: reconnected with them');
    setTimeout(() => void old.close().catch(() => undefined), OLD_CONNECTION_GRACE_MS).unref();
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
  const app = buildBridge({
    // A getter: the app reads the client per request, so a reconnect above reaches it.
    get temporal() {
      return temporal.client;
    },
    taskQueue: config.temporal.taskQueue,
    verifier,
    nonces,
    logger: opts.logger,
    signedPath: config.bridge.signedPath,
    metrics,
    tracer: opts.tracing?.tracer,
  });
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ port: opts.port ?? config.bridge.port, host });
  const port = (app.server.address() as { port: number }).port;
  const ops =
    registry && metricsPort !== undefined
      ? await startObservabilityServer({ port: metricsPort, host, registry, ready: () => temporalReachable(temporal.connection)() })
      : undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    opsUrl: ops?.url,
    close: async () => {
      await ops?.close();
      stopWatching();
      await app.close(); // finishes requests in flight
      await temporal.connection.close();
    },
  };
}
