/**
 * The workflow half of tracing, bundled only when tracing is on (tracing.ts, fleet/bundle.ts):
 * every workflow context evaluates its bundle's modules again, and OpenTelemetry's are not small
 * (docs/performance.md). Spans of workflow execution, signal, update and query handlers and
 * scheduled activities leave the sandbox through the `exporter` sink the worker injects.
 */
export { interceptors } from '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors';
