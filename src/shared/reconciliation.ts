/**
 * Reconciliation (CONTRACTS §9, issue 22): the four schedules, the workflows they start, the
 * report each run ends with, and its progress query. Imported by the workflows, the activities,
 * the schedules module and the CLI, so each name is written once.
 */
import { defineQuery } from '@temporalio/workflow';

export type ReconcileKind = 'money' | 'cards' | 'bins' | 'stuck';

export interface ReconciliationDef {
  /** The schedule's ID, and the prefix of the IDs of the workflows it starts. */
  scheduleId: string;
  /** The workflow the schedule starts: of the same name (CONTRACTS §9). */
  workflowType: string;
  /**
   * The type the workflow had before it took the schedule's name: still registered, so runs and
   * schedules made before the rename finish (and continue-as-new) under it, and `drift` reads
   * their reports. `schedules apply` moves a schedule to `workflowType`.
   */
  formerWorkflowType: string;
  /** How often the schedule runs it. */
  every: string;
  /** How far back a run looks when not told (money flows closed since then). */
  defaultLookBack: string;
}

export const RECONCILIATIONS: Readonly<Record<ReconcileKind, ReconciliationDef>> = {
  money: { scheduleId: 'reconcile-money', workflowType: 'reconcile-money', formerWorkflowType: 'reconcileMoney', every: '1 hour', defaultLookBack: '2 hours' },
  cards: { scheduleId: 'reconcile-cards', workflowType: 'reconcile-cards', formerWorkflowType: 'reconcileCards', every: '1 day', defaultLookBack: '1 day' },
  bins: { scheduleId: 'refresh-bins', workflowType: 'refresh-bins', formerWorkflowType: 'refreshBins', every: '1 day', defaultLookBack: '1 day' },
  stuck: { scheduleId: 'sweep-stuck', workflowType: 'sweep-stuck', formerWorkflowType: 'sweepStuck', every: '1 hour', defaultLookBack: '1 hour' },
};

export const RECONCILE_KINDS = Object.keys(RECONCILIATIONS) as ReconcileKind[];

export function reconcileKindOf(value: string): ReconcileKind | undefined {
  return (RECONCILE_KINDS as string[]).includes(value) ? (value as ReconcileKind) : undefined;
}

/** What a difference is about (the `kind` label of reconciliation_differences). */
export type DifferenceKind =
  /** We say done; the provider says failed, or does not know the key. */
  | 'done-not-at-provider'
  /** We say failed, timed out or OutcomeUnknown; the provider says COMPLETED: money moved that no flow accounts for. */
  | 'moved-unaccounted'
  | 'amount-differs'
  | 'status-differs'
  | 'card-balance-differs'
  | 'card-status-differs'
  | 'card-unknown-at-provider'
  | 'bin-added'
  | 'bin-removed'
  | 'flow-stuck';

/** The difference kinds each reconciliation reports (its gauges are set, zeros included, after each run). */
export const DIFFERENCE_KINDS: Readonly<Record<ReconcileKind, readonly DifferenceKind[]>> = {
  money: ['done-not-at-provider', 'moved-unaccounted', 'amount-differs', 'status-differs'],
  cards: ['card-balance-differs', 'card-status-differs', 'card-unknown-at-provider'],
  bins: ['bin-added', 'bin-removed'],
  stuck: ['flow-stuck'],
};

export interface Difference {
  kind: DifferenceKind;
  /** The ids that name what differs (cardId, idempotency key, merOrderNo, orderNo, cardBinId). */
  ids: Record<string, string>;
  /** Our value, and the provider's (absent: that side has none). */
  ours?: unknown;
  provider?: unknown;
  /** The flow to look at, when one is involved. */
  workflowId?: string;
  /** What kind of flow it is (fundCard, sendPayout, issueCard, …), when one is involved. */
  flowKind?: string;
}

export interface DriftReport {
  kind: ReconcileKind;
  startedAt: string;
  finishedAt: string;
  /** How many items (flows, cards, BINs) were checked. */
  checked: number;
  differences: Difference[];
  /** How many of the differences were corrected in our own view (a card workflow's cached card). */
  corrected: number;
  /** refresh-bins: the provider's BIN ids as the run read them, the baseline of the next run on any worker. */
  bins?: string[];
}

export interface ReconcileInput {
  /** Look back this far (a duration such as `2 hours`, `30m`); default: the kind's. */
  since?: string;
  /** Visibility page size (tests and the bench set it small to exercise continue-as-new). */
  pageSize?: number;
  /** sweep-stuck: a flow running longer than this (a duration) is stuck, whatever its kind's expected time. */
  stuckAfter?: string;
  /** Pages per run before continue-as-new (default 10). */
  pagesPerRun?: number;
  /** Carried across continue-as-new: where the run is and what it found so far. */
  resume?: ReconcileProgress;
}

/** What a paced read says of the provider's window it landed in: its end (X-RateLimit-Reset, epoch ms), when the answer said. */
export interface WindowedRead {
  windowResetAt?: number;
}

/** How fast a reconciliation may read: at most `readsPerWindow` provider reads per window of `windowMs`. */
export interface ReadBudget {
  windowMs: number;
  readsPerWindow: number;
}

/**
 * RECONCILE_BUDGET_SHARE of the smallest window among the endpoints reconciliation reads (each
 * reads one endpoint family per run; all have 100 per window today), at least one read.
 */
export function readBudget(windowMs: number, share: number, endpointLimits: readonly number[]): ReadBudget {
  return { windowMs, readsPerWindow: Math.max(1, Math.floor(share * Math.min(...endpointLimits))) };
}

export interface ReconcileProgress {
  startedAt: string;
  /** The visibility query fixed at the first run, so every page reads the same set. */
  query: string;
  /** The look-back's start (epoch ms), fixed at the first run with the query (absent in runs started before it was kept). */
  sinceMs?: number;
  /** base64 of the visibility page token; absent on the first page; null: no page left. */
  pageToken?: string | null;
  pages: number;
  checked: number;
  corrected: number;
  differences: Difference[];
  /** When the next batch of reads may start (epoch ms): a continued run keeps its predecessor's pace. */
  nextReadAt?: number;
}

/** How far a reconciliation is: pages and items done so far (the report's figures), and whether more pages remain. */
export const reconcileProgressQuery = defineQuery<{ kind: ReconcileKind; pages: number; checked: number; differences: number; corrected: number; done: boolean }>(
  'reconcileProgress',
);

/** Kept per report, so a run with a million differences still ends with a result Temporal accepts. */
export const MAX_REPORTED_DIFFERENCES = 1000;

/** Summary of a report for logs and people: "reconcile-money: 12 checked, no difference". */
export function summariseReport(report: DriftReport): string {
  const name = RECONCILIATIONS[report.kind].scheduleId;
  if (report.differences.length === 0) return `${name}: ${report.checked} checked, no difference`;
  const byKind = countByKind(report.differences);
  const kinds = Object.entries(byKind).map(([k, n]) => `${n} ${k}`).join(', ');
  return `${name}: ${report.checked} checked, ${report.differences.length} difference(s) (${kinds}), ${report.corrected} corrected`;
}

export function countByKind(differences: Difference[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of differences) out[d.kind] = (out[d.kind] ?? 0) + 1;
  return out;
}

/** Money flows reconcile-money checks (FlowKind search attribute values). */
export const MONEY_FLOW_KINDS = ['fundCard', 'withdrawFromCard', 'sendPayout', 'trackPayout', 'purchaseEsim', 'rechargeEsim'] as const;

/** How long a flow of each kind is expected to run before sweep-stuck reports it (ms). */
export const EXPECTED_FLOW_MS: Readonly<Record<string, number>> = {
  issueCard: 10 * 60_000,
  fundCard: 10 * 60_000,
  withdrawFromCard: 10 * 60_000,
  onboardCardholder: 3 * 24 * 3_600_000,
  purchaseEsim: 60 * 60_000,
  rechargeEsim: 60 * 60_000,
  sendPayout: 3 * 24 * 3_600_000,
  trackPayout: 3 * 24 * 3_600_000,
};

/** Parses `2 hours`, `30m`, `1d`, `45s`, `500ms` into milliseconds; undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d+)\s*(ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)\s*$/i.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2].toLowerCase();
  const scale = unit === 'ms' ? 1 : unit.startsWith('s') ? 1000 : unit.startsWith('m') ? 60_000 : unit.startsWith('h') ? 3_600_000 : 86_400_000;
  return n > 0 ? n * scale : undefined;
}

/**
 * A visibility string literal that nothing in `value` can end early. Temporal reads a query with a
 * MySQL-style tokenizer, where a backslash escapes the next character: a value ending in a backslash
 * would escape our closing quote, and what follows in the query would be read as part of the value
 * (or the value's own text as query). So backslashes are doubled as well as quotes. Pure: workflows
 * and clients build their queries with it.
 */
export function literal(value: string): string {
  return `'${value.replace(/[\\']/g, (c) => (c === "'" ? "''" : '\\\\'))}'`;
}
