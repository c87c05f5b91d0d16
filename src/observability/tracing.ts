/**
 * Traces: OpenTelemetry spans exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set,
 * and nothing at all otherwise: no tracer provider, no interceptors, no OpenTelemetry in the
 * workflow bundle (every workflow context evaluates the bundle's modules again; issue 12).
 *
 * An entry point starts tracing once (`startTracing`) and hands the result to what it builds:
 * the Temporal clients (bridge, starter, activities) get Temporal's client interceptors, the
 * workers its activity and workflow interceptors and the sink that carries workflow spans out
 * of the sandbox, the bridge a tracer for its server span. Temporal's interceptors carry the
 * context in headers, so one trace runs from a webhook through signal-with-start into the
 * workflow's signal handler and the activities it schedules.
 *
 * Nothing sensitive leaves the process: every span goes through `RedactingSpanProcessor`, which
 * keeps only listed attributes (ids, types, HTTP method, route and status) and drops failure
 * messages, which stay encrypted in history (codec/failure-converter.ts) and so stay out of traces too.
 */
import { context, propagation, trace, SpanKind, SpanStatusCode, type Attributes, type Context, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_EXCEPTION_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { ClientInterceptors } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { TracingConfig } from '../config';

/** The workflow interceptor module: bundled only when tracing is on (fleet/bundle.ts, fleet/workers.ts). */
export const WORKFLOW_TRACING_MODULE = require.resolve('./workflow-interceptors');

/** The webhook's provider event type on the bridge's span (a type such as CARD_CREATED, never data). */
export const ATTR_PROVIDER_EVENT_TYPE = 'provider.event_type';

/**
 * Attributes that may leave the process: the ids and types Temporal's interceptors set (its
 * workflow sink adds the whole WorkflowInfo, memo and search attributes included, to workflow
 * spans: only these of it are kept), and the HTTP ones of the bridge's span.
 */
const ALLOWED_ATTRIBUTES = new Set<string>([
  'temporalWorkflowId', 'run_id', 'temporalActivityId', 'temporalUpdateId',
  'workflowId', 'runId', 'workflowType', 'taskQueue', 'namespace', 'attempt',
  ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_ROUTE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_PROVIDER_EVENT_TYPE,
  ATTR_EXCEPTION_TYPE,
]);

export interface Tracing {
  readonly serviceName: string;
  /** This process's tracer (the bridge's server span). */
  readonly tracer: Tracer;
  /** For `new Client({ interceptors })`: spans of start, signal, signal-with-start, update and query, their context sent in headers. */
  clientInterceptors(): ClientInterceptors;
  /** For a worker: activity spans, and the workflow interceptor module when this worker bundles its workflows. */
  workerInterceptors(bundlesWorkflows: boolean): WorkerInterceptors;
  /** For the worker that runs workflows: the sink through which workflow spans leave the sandbox. */
  workerSinks(): InjectedSinks<OpenTelemetrySinks>;
  /** Exports what is buffered now (tests; the processor otherwise sends every few seconds). */
  forceFlush(): Promise<void>;
  /** Exports what is left and stops; call once the process's clients and workers are closed. */
  shutdown(): Promise<void>;
}

/**
 * Starts this process's tracing (OTLP/HTTP, JSON, to the endpoint's /v1/traces), or returns
 * undefined when tracing is off. Registers the tracer provider, W3C propagation and the async
 * context manager globally, since Temporal's interceptors read the active context through the
 * global API: one per process, and `shutdown` unregisters them.
 */
export function startTracing(config: TracingConfig | undefined, defaultServiceName: string): Tracing | undefined {
  if (!config) return undefined;
  const serviceName = config.serviceName ?? defaultServiceName;
  const processor = new RedactingSpanProcessor(new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(config.endpoint) })));
  const provider = new NodeTracerProvider({ resource: new Resource({ [ATTR_SERVICE_NAME]: serviceName }), spanProcessors: [processor] });
  provider.register();
  const tracer = provider.getTracer('card-issuing');
  const interceptorOptions = { tracer };
  return {
    serviceName,
    tracer,
    clientInterceptors: () => ({ workflow: [new OpenTelemetryWorkflowClientInterceptor(interceptorOptions)] }),
    workerInterceptors: (bundlesWorkflows) => ({
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx, interceptorOptions), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
      workflowModules: bundlesWorkflows ? [WORKFLOW_TRACING_MODULE] : [],
    }),
    // Workflow spans are made in the sandbox by a provider of its own; they get this process's resource here.
    workerSinks: () => ({ exporter: makeWorkflowExporter(processor, provider.resource) }),
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** OTLP/HTTP's rule for the general endpoint variable: traces go to its /v1/traces. */
export function tracesUrl(endpoint: string): string {
  return new URL('v1/traces', endpoint.endsWith('/') ? endpoint : `${endpoint}/`).toString();
}

/** Whether a built workflow bundle carries the workflow interceptor module (its paths stay in the code: bundles are built in development mode). */
export function bundleHasTracing(code: string): boolean {
  return code.includes('/observability/workflow-interceptors.');
}

/**
 * Runs an HTTP handler in a server span (a new trace: the caller's trace context is not taken
 * from a public endpoint), active while it runs so that Temporal's client spans become its
 * children; the answer's status is recorded, and 5xx marks the span as failed. Without a
 * tracer the handler just runs.
 */
export async function inServerSpan<T>(tracer: Tracer | undefined, method: string, route: string, handler: () => Promise<T>, statusOf: () => number): Promise<T> {
  if (!tracer) return handler();
  const attributes: Attributes = { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_HTTP_ROUTE]: route };
  return tracer.startActiveSpan(`${method} ${route}`, { kind: SpanKind.SERVER, root: true, attributes }, async (span) => {
    try {
      return await handler();
    } finally {
      const status = statusOf();
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  });
}

/** Every span, ours and Temporal's, passes here on its way out: only listed attributes, no failure messages. */
class RedactingSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    this.next.onEnd(redacted(span));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

function redacted(span: ReadableSpan): ReadableSpan {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanId: span.parentSpanId,
    startTime: span.startTime,
    endTime: span.endTime,
    status: { code: span.status.code },
    attributes: allowed(span.attributes),
    links: span.links,
    events: span.events.map((e) => ({ name: e.name, time: e.time, attributes: allowed(e.attributes ?? {}), droppedAttributesCount: e.droppedAttributesCount })),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationLibrary: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

function allowed(attributes: Attributes): Attributes {
  const kept: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (ALLOWED_ATTRIBUTES.has(key) && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) kept[key] = value;
  }
  return kept;
}
