/**
 * Traces over real OTLP/HTTP: a receiver of our own takes the exporter's JSON, a worker and a
 * bridge trace on the run's Temporal dev server, and one signed webhook makes one trace from
 * the bridge's server span through signal-with-start into the workflow's signal handler.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, type Config } from '../../src/config';
import { startBridge, type RunningBridge } from '../../src/bridge';
import { createDataConverter } from '../../src/codec/payload-codec';
import { bundleHasTracing, startTracing, tracesUrl, type Tracing } from '../../src/observability/tracing';
import { HmacSha256Scheme } from '../../src/provider/signing';
import { entityWorkflowId } from '../../src/shared/ids';
import { entityStateQuery } from '../../src/shared/messages';
import { runCli } from '../../src/starter/run';
import { buildWorkflowBundle } from '../../src/fleet/bundle';
import { connectionOptions } from '../../src/temporal/connection';
import { createWorkers, type WorkerFleet } from '../../src/fleet/workers';
import { TEST_CODEC_KEY, TEST_PIN_KEYS, temporalAddress } from '../helpers/stack';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}
interface Received {
  service: string;
  span: OtlpSpan;
}

/** A collector in miniature: POST /v1/traces with OTLP JSON (the 0.57 HTTP exporter's encoding), spans kept in order. */
async function startOtlpReceiver(): Promise<{ url: string; spans: Received[]; bodies: string[]; close(): Promise<void> }> {
  const spans: Received[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      for (const rs of JSON.parse(body).resourceSpans ?? []) {
        const service = rs.resource.attributes.find((a: { key: string }) => a.key === 'service.name')?.value.stringValue;
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ service, span });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, spans, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function quietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // installed already in this process
  }
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value && (value.stringValue ?? value.intValue);
};

function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ TEMPORAL_ADDRESS: temporalAddress(), TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`, PAYLOAD_CODEC_KEY: TEST_CODEC_KEY, PAYLOAD_CODEC_KEY_ID: 'test', PIN_SEAL_PRIVATE_KEY: TEST_PIN_KEYS.privateKey, ...env });
}

describe('traces', () => {
  let tracedBundle: string;
  beforeAll(async () => {
    quietRuntime();
    tracedBundle = await buildWorkflowBundle(join(mkdtempSync(join(tmpdir(), 'traced-bundle-')), 'workflow-bundle.js'), { tracing: true });
  });

  test('spans go to /v1/traces under the endpoint, as OTLP/HTTP asks of the general endpoint variable', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://otlp.example.com/tenant-1/')).toBe('https://otlp.example.com/tenant-1/v1/traces');
    expect(testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toEqual({ endpoint: 'http://collector:4318', serviceName: undefined });
    expect(() => testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an OTLP\/HTTP base URL/);
  });

  test('with OTEL_EXPORTER_OTLP_ENDPOINT unset there is no tracer provider, no interceptor and no OpenTelemetry in the bundle', async () => {
    const config = testConfig();
    expect(config.tracing).toBeUndefined();
    expect(startTracing(config.tracing, 'card-issuing-test')).toBeUndefined();
    // Nothing registered: the global API hands out non-recording spans.
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);

    const plainBundle = process.env.TEST_WORKFLOW_BUNDLE!;
    expect(bundleHasTracing(readFileSync(plainBundle, 'utf8'))).toBe(false);
    expect(readFileSync(plainBundle, 'utf8')).not.toContain('@opentelemetry');
    const fleet = await createWorkers({ config, workflowBundlePath: plainBundle, enforceRateBudget: false });
    const running = fleet.run();
    fleet.shutdown();
    await running;
    for (const worker of fleet.workers) {
      expect(worker.options.interceptors.activity).toHaveLength(0);
      expect(Object.keys(worker.options.sinks ?? {})).not.toContain('exporter');
    }
    // A bundle that does not match the setting is refused at start, both ways.
    await expect(createWorkers({ config, workflowBundlePath: tracedBundle })).rejects.toThrow(/built with tracing but OTEL_EXPORTER_OTLP_ENDPOINT is not set/);
  });

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>> | undefined;
    let tracing: Tracing | undefined;
    let fleet: WorkerFleet | undefined;
    let running: Promise<void> | undefined;
    let bridge: RunningBridge | undefined;
    let connection: Connection | undefined;
    afterEach(async () => {
      fleet?.shutdown();
      await running;
      await bridge?.close();
      await connection?.close();
      await tracing?.shutdown();
      await receiver?.close();
      fleet = running = bridge = connection = tracing = receiver = undefined;
    });

    test('one signed webhook makes one trace: the bridge span, its signal-with-start, and the workflow handling the signal', async () => {
      const otlp = (receiver = await startOtlpReceiver());
      const config = testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: 'card-issuing-test' });
      const traces = (tracing = startTracing(config.tracing, 'unused')!);
      expect(traces.serviceName).toBe('card-issuing-test');
      await expect(createWorkers({ config, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE!, tracing: traces })).rejects.toThrow(/built without tracing/);

      fleet = await createWorkers({ config, workflowBundlePath: tracedBundle, enforceRateBudget: false, tracing: traces });
      running = fleet.run();
      const webhooks = (bridge = await startBridge(config, { port: 0, tracing: traces }));

      // Identity and card data in the event: they travel as (encrypted) payloads, never as span attributes.
      const kycId = `kyc_${randomUUID()}`;
      const body = JSON.stringify({ eventType: 'CARDHOLDER_KYC_STATUS', data: { id: kycId, kycStatus: 'APPROVED', idNumber: 'ID-778899', cardNumber: '4111111111111111' } });
      const signer = new HmacSha256Scheme({ apiKey: config.provider.apiKey, secret: config.provider.webhookSecret });
      const headers = { ...signer.sign({ method: 'POST', pathWithQuery: '/webhooks/provider', body }), 'content-type': 'application/json' };
      const res = await fetch(`${webhooks.url}/webhooks/provider`, { method: 'POST', headers, body });
      expect(res.status).toBe(200);

      connection = await Connection.connect(connectionOptions(config.temporal));
      const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec) });
      const workflowId = entityWorkflowId('kyc', kycId);
      expect(await client.workflow.getHandle(workflowId).query(entityStateQuery)).toMatchObject({ eventCount: 1 });

      const byName = (name: string) => otlp.spans.find((r) => r.span.name === name)?.span;
      const deadline = Date.now() + 15_000;
      while (!byName('HandleSignal:providerEvent') && Date.now() < deadline) {
        await traces.forceFlush();
        await new Promise((r) => setTimeout(r, 200));
      }
      const server = byName('POST /webhooks/provider');
      const signalWithStart = byName('SignalWithStartWorkflow:providerEntity');
      const handled = byName('HandleSignal:providerEvent');
      expect({ server: !!server, signalWithStart: !!signalWithStart, handled: !!handled }).toEqual({ server: true, signalWithStart: true, handled: true });

      // One trace, linked parent to child: webhook → signal-with-start → the workflow's signal handler.
      // (The entity workflow's own RunWorkflow span ends with the workflow, which lingers: not exported yet.)
      expect(server!.parentSpanId ?? '').toBe('');
      expect(server!.kind).toBe(2); // SERVER
      expect(attribute(server!, 'http.response.status_code')).toBe(200);
      expect(attribute(server!, 'provider.event_type')).toBe('CARDHOLDER_KYC_STATUS');
      expect(signalWithStart!.traceId).toBe(server!.traceId);
      expect(signalWithStart!.parentSpanId).toBe(server!.spanId);
      expect(attribute(signalWithStart!, 'temporalWorkflowId')).toBe(workflowId);
      expect(handled!.traceId).toBe(server!.traceId);
      expect(handled!.parentSpanId).toBe(signalWithStart!.spanId);
      expect(new Set(otlp.spans.map((r) => r.service))).toEqual(new Set(['card-issuing-test']));

      // Nothing sensitive left the process: no event data, no secrets, none of the WorkflowInfo's memo or search attributes.
      const exported = otlp.bodies.join('\n');
      for (const secret of ['ID-778899', '4111111111111111', config.provider.webhookSecret, config.codec.key, 'searchAttributes', 'memo']) {
        expect(exported).not.toContain(secret);
      }
    });

    test('the starter CLI traces its calls as card-issuing-starter and sends them before it exits', async () => {
      const otlp = (receiver = await startOtlpReceiver());
      const config = testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
      const io = { stdout: () => undefined, stderr: () => undefined };
      expect(await runCli(['status', 'no-such-flow'], () => config, io)).toBe(2);
      // No forceFlush here: the CLI's own shutdown sent the span.
      const described = otlp.spans.find((r) => r.span.name === 'DescribeWorkflow');
      expect(described?.service).toBe('card-issuing-starter');
      expect(attribute(described!.span, 'temporalWorkflowId')).toBe('no-such-flow');
    });
  });
});
