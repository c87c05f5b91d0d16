/**
 * The operations endpoint of a process, on METRICS_PORT: `/metrics` (our prom-client registry,
 * followed by the Temporal SDK's own metrics when the process runs workers), `/health`
 * (liveness: the process answers) and `/ready` (readiness: Temporal can be reached), also
 * exported as the gauge `service_ready`.
 */
import Fastify from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { Connection } from '@temporalio/client';

export interface ObservabilityOptions {
  port: number;
  host: string;
  registry: Registry;
  /** Readiness; answered 503 when false or when it throws. */
  ready: () => Promise<boolean>;
  /** The SDK Runtime's Prometheus exporter, served behind our own metrics. */
  sdkMetricsUrl?: string;
}

export interface RunningObservability {
  url: string;
  close(): Promise<void>;
}

export async function startObservabilityServer(opts: ObservabilityOptions): Promise<RunningObservability> {
  readinessGauge(opts.registry, opts.ready);
  const app = Fastify({ logger: false });
  app.get('/health', async () => ({ ok: true }));
  app.get('/ready', async (_req, reply) => {
    const ready = await opts.ready().catch(() => false);
    return reply.code(ready ? 200 : 503).send({ ready });
  });
  app.get('/metrics', async (_req, reply) => {
    const ours = await opts.registry.metrics();
    const sdk = opts.sdkMetricsUrl ? await fetch(opts.sdkMetricsUrl).then((r) => r.text(), () => '') : '';
    return reply.header('content-type', opts.registry.contentType).send(`${ours}\n${sdk}`);
  });
  await app.listen({ port: opts.port, host: opts.host });
  const address = app.server.address() as { port: number };
  return { url: `http://${opts.host}:${address.port}`, close: () => app.close() };
}

/** Readiness of anything that needs Temporal: its frontend answers a health check within 2 s. */
export function temporalReachable(connection: Pick<Connection, 'healthService' | 'withDeadline'>): () => Promise<boolean> {
  return async () => {
    const res = await connection.withDeadline(Date.now() + 2000, () => connection.healthService.check({}));
    return res.status === 1; // SERVING
  };
}

/**
 * `service_ready`: what /ready would answer, asked at each scrape. The kubelet reads /ready;
 * Prometheus reads only /metrics, so the alert "not ready" needs the answer as a series.
 */
function readinessGauge(registry: Registry, ready: () => Promise<boolean>): void {
  new Gauge({
    name: 'service_ready',
    help: '1 when the process is ready (Temporal answers a health check within 2 s), 0 otherwise; asked at each scrape',
    registers: [registry],
    async collect() {
      this.set((await ready().catch(() => false)) ? 1 : 0);
    },
  });
}
