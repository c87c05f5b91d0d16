/**
 * Our own Prometheus metrics (prom-client), one registry per process. Names and labels follow
 * Prometheus conventions; endpoint labels are the provider's endpoint names (our ENDPOINTS
 * keys, path parameters normalised away), never ids. Temporal's own metrics come from the SDK
 * Runtime's exporter and are served beside these (server.ts).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ProviderCallObserver } from '../provider/transport';

export function createRegistry(): Registry {
  return new Registry();
}

/** Provider client: requests by endpoint and status, 429s, local refusals, latency, remaining budget. */
export function providerMetrics(registry: Registry): ProviderCallObserver {
  const requests = new Counter({ name: 'provider_requests_total', help: 'Provider calls answered, by endpoint and HTTP status (0: no answer)', labelNames: ['endpoint', 'status'], registers: [registry] });
  const limited = new Counter({ name: 'provider_rate_limited_total', help: 'Provider answers 429, by endpoint', labelNames: ['endpoint'], registers: [registry] });
  const refused = new Counter({ name: 'provider_rate_budget_refusals_total', help: 'Calls refused locally because the window was spent, by endpoint', labelNames: ['endpoint'], registers: [registry] });
  const latency = new Histogram({
    name: 'provider_request_duration_seconds',
    help: 'Provider call latency, by endpoint',
    labelNames: ['endpoint'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const remaining = new Gauge({ name: 'provider_rate_limit_remaining', help: 'X-RateLimit-Remaining of the last answer, by endpoint', labelNames: ['endpoint'], registers: [registry] });
  return {
    answered(endpoint, status, seconds, rateRemaining) {
      requests.inc({ endpoint, status: String(status) });
      latency.observe({ endpoint }, seconds);
      if (status === 429) limited.inc({ endpoint });
      if (rateRemaining !== undefined) remaining.set({ endpoint }, rateRemaining);
    },
    unanswered(endpoint, seconds) {
      requests.inc({ endpoint, status: '0' });
      latency.observe({ endpoint }, seconds);
    },
    refusedLocally(endpoint) {
      refused.inc({ endpoint });
    },
  };
}

export type WebhookOutcome = 'accepted' | 'duplicate' | 'refused' | 'malformed' | 'unavailable';

export interface BridgeMetrics {
  webhook(outcome: WebhookOutcome, reason?: string): void;
  signalled(seconds: number): void;
}

/** Bridge: webhooks by outcome (refusals by reason), and how long Temporal took to take the signal. */
export function bridgeMetrics(registry: Registry): BridgeMetrics {
  const webhooks = new Counter({ name: 'bridge_webhooks_total', help: 'Webhooks by outcome; refusals by reason', labelNames: ['outcome', 'reason'], registers: [registry] });
  const signal = new Histogram({
    name: 'bridge_signal_duration_seconds',
    help: 'Signal-with-start latency of accepted webhooks',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    webhook: (outcome, reason = '') => webhooks.inc({ outcome, reason }),
    signalled: (seconds) => signal.observe(seconds),
  };
}

export interface ReconciliationMetrics {
  /** The differences the last run of a reconciliation (its schedule's name) found, by difference kind (CONTRACTS §9). */
  differences(reconciliation: string, kind: string, count: number): void;
  /** Flows the last sweep found stuck, by flow kind. */
  stuck(flowKind: string, count: number): void;
  /** When a run of the reconciliation ended (epoch ms). */
  ran(reconciliation: string, at: number): void;
  /** When a run of the reconciliation started, continued-as-new or ended (epoch ms): it is alive. */
  active(reconciliation: string, at: number): void;
}

/**
 * Worker: what the reconciliation schedules found (issue 22). Gauges, not counters: each run
 * replaces its kind's figure, so an alert reads "differences now", not "differences ever". Each
 * worker holds the figures of the runs it made; `reconciliation_last_run_timestamp_seconds` says
 * which worker made the latest run of each reconciliation, so alerts read that worker's figures
 * only (deploy/prometheus/alerts.yml); `reconciliation_last_active_timestamp_seconds` pages when a
 * reconciliation stops running (a long run counts as alive at each continue-as-new).
 */
export function reconciliationMetrics(registry: Registry): ReconciliationMetrics {
  const differences = new Gauge({ name: 'reconciliation_differences', help: 'Differences found by the last reconciliation run this worker made, by reconciliation and difference kind', labelNames: ['reconciliation', 'kind'], registers: [registry] });
  const stuck = new Gauge({ name: 'flows_stuck', help: 'Flows the last sweep-stuck run this worker made found stuck, by flow kind', labelNames: ['flow_kind'], registers: [registry] });
  const lastRun = new Gauge({ name: 'reconciliation_last_run_timestamp_seconds', help: 'When the last run of each reconciliation this worker made ended (Unix seconds)', labelNames: ['reconciliation'], registers: [registry] });
  const lastActive = new Gauge({ name: 'reconciliation_last_active_timestamp_seconds', help: 'When a run of each reconciliation last started, continued-as-new or ended on this worker (Unix seconds)', labelNames: ['reconciliation'], registers: [registry] });
  return {
    differences: (reconciliation, kind, count) => differences.set({ reconciliation, kind }, count),
    stuck: (flowKind, count) => stuck.set({ flow_kind: flowKind }, count),
    ran: (reconciliation, at) => {
      lastRun.set({ reconciliation }, Math.floor(at / 1000));
      lastActive.set({ reconciliation }, Math.floor(at / 1000));
    },
    active: (reconciliation, at) => lastActive.set({ reconciliation }, Math.floor(at / 1000)),
  };
}
