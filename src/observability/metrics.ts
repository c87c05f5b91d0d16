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

/** The steps of an accepted webhook inside the bridge, in order (bridge/app.ts): where its time goes. */
export const WEBHOOK_STEPS = ['read', 'verify', 'dedupe', 'decode', 'signal', 'answer'] as const;
export type WebhookStep = (typeof WEBHOOK_STEPS)[number];

export interface BridgeMetrics {
  webhook(outcome: WebhookOutcome, reason?: string): void;
  signalled(seconds: number): void;
  /** One step of an accepted webhook. */
  step(step: WebhookStep, seconds: number): void;
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
  const steps = new Histogram({
    name: 'bridge_webhook_step_seconds',
    help: 'Time of each step of an accepted webhook in the bridge: read (the body), verify (signature), dedupe (nonce), decode (JSON and routing), signal (signal-with-start), answer (the 2xx written)',
    labelNames: ['step'],
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  return {
    webhook: (outcome, reason = '') => webhooks.inc({ outcome, reason }),
    signalled: (seconds) => signal.observe(seconds),
    step: (step, seconds) => steps.observe({ step }, seconds),
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
  /** Whether the last run had to cap its look-back (reconcile-money: its last run started more than MAX_LOOK_BACK_MS ago). */
  lookBackCapped(reconciliation: string, capped: boolean): void;
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
  const capped = new Gauge({ name: 'reconciliation_look_back_capped', help: 'Whether the last run of each reconciliation this worker made read from its maximum look-back rather than from where its last run started (1: flows closed before the cap were not read)', labelNames: ['reconciliation'], registers: [registry] });
  const lastActive = new Gauge({ name: 'reconciliation_last_active_timestamp_seconds', help: 'When a run of each reconciliation last started, continued-as-new or ended on this worker (Unix seconds)', labelNames: ['reconciliation'], registers: [registry] });
  return {
    differences: (reconciliation, kind, count) => differences.set({ reconciliation, kind }, count),
    stuck: (flowKind, count) => stuck.set({ flow_kind: flowKind }, count),
    ran: (reconciliation, at) => {
      lastRun.set({ reconciliation }, Math.floor(at / 1000));
      lastActive.set({ reconciliation }, Math.floor(at / 1000));
    },
    active: (reconciliation, at) => lastActive.set({ reconciliation }, Math.floor(at / 1000)),
    lookBackCapped: (reconciliation, isCapped) => capped.set({ reconciliation }, isCapped ? 1 : 0),
  };
}

/** How a gauge read from Temporal's visibility is paced, and told of a failed read. */
export interface VisibilityReadOptions {
  /** Told of a failed read: once, and again only after a read succeeded. */
  onReadFailed(err: unknown): void;
  /** No read begins sooner than this after the last one began (default 10 s): scrapes in between share its figures. */
  minIntervalMs?: number;
  /** How long a scrape waits for a read under way before it answers with the last figures (default 2 s). */
  scrapeWaitMs?: number;
  /** A read not answered by then has failed (default 30 s), and the next scrape may begin another. */
  readTimeoutMs?: number;
}

export interface UnsettledOutcomesSource extends VisibilityReadOptions {
  /** The flows that ended OutcomeUnknown and are not settled (temporal/settlements.ts unsettledOutcomes), each with its workflow type. */
  read(): Promise<ReadonlyArray<{ type: string }>>;
  /** The flow kinds shown at 0 when none of theirs is unsettled (shared/outcome-unknown.ts OUTCOME_UNKNOWN_FLOWS). */
  kinds: readonly string[];
}

/**
 * A read of Temporal's visibility shared by a scrape's gauges: begun when scraped, at most once per
 * `minIntervalMs`; a slow or failing Temporal never fails or holds up /metrics: a scrape waits
 * `scrapeWaitMs` at most, and a failed read keeps the last figures (none before the first read
 * answered: not knowing is not zero).
 */
function visibilityRead<T>(read: () => Promise<T>, options: VisibilityReadOptions): () => Promise<T | undefined> {
  const { minIntervalMs = 10_000, scrapeWaitMs = 2_000, readTimeoutMs = 30_000 } = options;
  let latest: T | undefined;
  let reading: Promise<void> | undefined;
  let lastBegun = Number.NEGATIVE_INFINITY;
  let failing = false;
  const begin = async () => {
    try {
      latest = await within(read(), readTimeoutMs);
      failing = false;
    } catch (err) {
      if (!failing) options.onReadFailed(err);
      failing = true;
    }
  };
  return async () => {
    if (reading === undefined && Date.now() - lastBegun >= minIntervalMs) {
      lastBegun = Date.now();
      reading = begin().finally(() => {
        reading = undefined;
      });
    }
    if (reading !== undefined) await within(reading, scrapeWaitMs).catch(() => undefined);
    return latest;
  };
}

/**
 * Worker: `outcome_unknown_unsettled{flow_kind}`, the flows that ended OutcomeUnknown before open
 * items and that nobody settled yet (issue 29), by workflow type, zeros included (a flow that ends so
 * now opens an item, counted by open_items). Every worker reads the same visibility, so the alert
 * takes the max across workers (deploy/prometheus/alerts.yml OutcomeUnknownUnsettled).
 */
export function outcomeUnknownMetrics(registry: Registry, source: UnsettledOutcomesSource): void {
  const latest = visibilityRead(async () => {
    const counts = new Map(source.kinds.map((kind) => [kind, 0]));
    for (const { type } of await source.read()) counts.set(type, (counts.get(type) ?? 0) + 1);
    return counts;
  }, source);
  new Gauge({
    name: 'outcome_unknown_unsettled',
    help: 'Flows that ended OutcomeUnknown (or SubmissionOutcomeUnknown) and have no settlement yet (starter settle), by flow kind (workflow type); a flow that opens an open item is counted by open_items instead',
    labelNames: ['flow_kind'],
    registers: [registry],
    async collect() {
      const counts = await latest();
      this.reset();
      for (const [flowKind, count] of counts ?? []) this.set({ flow_kind: flowKind }, count);
    },
  });
}

export interface OpenItemsSource extends VisibilityReadOptions {
  /** The open items (temporal/open-items.ts listOpenItems): each one's flow kind and when it opened (epoch ms). */
  read(): Promise<ReadonlyArray<{ flowKind: string; openedAt: number }>>;
  /** The flow kinds shown at 0 when none of theirs is open. */
  kinds: readonly string[];
}

/**
 * Worker: `open_items{flow_kind}`, the calls that may have moved money and have had neither the
 * provider's final word nor an operator's settlement (shared/open-items.ts), card updates included;
 * and `open_item_oldest_age_seconds`, how long the oldest has been open (0 when none is): what
 * OpenItemOpenTooLong pages on. One visibility read serves both.
 */
export function openItemMetrics(registry: Registry, source: OpenItemsSource): void {
  const latest = visibilityRead(source.read, source);
  new Gauge({
    name: 'open_items',
    help: 'Open items: calls that may have moved money with no final word from the provider and no settlement yet, by flow kind (card updates as fundCard / withdrawFromCard)',
    labelNames: ['flow_kind'],
    registers: [registry],
    async collect() {
      const items = await latest();
      this.reset();
      if (!items) return;
      const counts = new Map(source.kinds.map((kind) => [kind, 0]));
      for (const { flowKind } of items) counts.set(flowKind, (counts.get(flowKind) ?? 0) + 1);
      for (const [flowKind, count] of counts) this.set({ flow_kind: flowKind }, count);
    },
  });
  new Gauge({
    name: 'open_item_oldest_age_seconds',
    help: 'How long the oldest open item has been open, in seconds (0 when none is)',
    registers: [registry],
    async collect() {
      const items = await latest();
      this.reset();
      if (!items) return;
      const oldest = Math.min(Date.now(), ...items.map((i) => i.openedAt));
      this.set(Math.max(0, Math.floor((Date.now() - oldest) / 1000)));
    },
  });
}

/**
 * Worker: `reconciliation_consecutive_failures{reconciliation}`, how many of each reconciliation's
 * latest runs failed one after another (temporal/reconciliation-runs.ts), zeros included. Every
 * worker reads the same visibility, so ReconciliationFailing takes the max across workers.
 */
export function reconciliationFailureMetrics(registry: Registry, source: VisibilityReadOptions & { read(): Promise<ReadonlyMap<string, number>> }): void {
  const latest = visibilityRead(source.read, source);
  new Gauge({
    name: 'reconciliation_consecutive_failures',
    help: "How many of a reconciliation's latest runs (up to 10) failed, timed out, were terminated or cancelled one after another; 0 once one completes",
    labelNames: ['reconciliation'],
    registers: [registry],
    async collect() {
      const counts = await latest();
      this.reset();
      for (const [reconciliation, count] of counts ?? []) this.set({ reconciliation }, count);
    },
  });
}

/** `promise`, or a rejection once `ms` have passed (the timer does not hold the process open). */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
