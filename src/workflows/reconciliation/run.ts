/**
 * The shape every reconciliation run shares: it pages through visibility, checks each page,
 * and continues-as-new every few pages with its cursor and its findings so far, so a run over
 * 100,000 cards keeps a bounded history; a worker that dies mid-run leaves the run where it was
 * (its state is its history). The progress query says how far it is. The report is the last
 * run's result, and its metrics and summary line are recorded by an activity.
 */
import { makeContinueAsNewFunc, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { rollOverOptions, targetBuildChanged, wakeOnRollOver } from '../lib/roll-over';
import type { Activities } from '../../activities';
import {
  MAX_REPORTED_DIFFERENCES,
  RECONCILIATIONS,
  parseDuration,
  reconcileProgressQuery,
  type Difference,
  type DriftReport,
  type ReconcileInput,
  type ReconcileKind,
  type ReconcileProgress,
} from '../../shared/reconciliation';
import { mainQueueOf } from '../../shared/task-queues';
import { failWith } from '../lib/provider';
import { FailureType } from '../../shared/failures';
import { ReadPacer, type Paced } from './pace';
import type { LookBack } from '../../shared/reconcile-checks';

export const DEFAULT_PAGE_SIZE = 100;
/** Pages per run before continue-as-new: a page of 100 cards is ~300 events, so a run stays near 3,000. */
const PAGES_PER_RUN = 10;

/** Temporal-only activities (visibility, queries, signals, metrics): on the workflow's own queue, no provider budget. */
export const temporalSide = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

export interface PageOutcome {
  checked: number;
  corrected: number;
  differences: Difference[];
  nextPageToken: string | null;
  /** Counts the report carries beside its figures (reconcile-money: the items it opened), summed over pages. */
  tally?: Record<string, number>;
}

/** A run's progress with what reconcile-money adds: where it reads from, and its tallies (carried across continue-as-new). */
type Progress = ReconcileProgress & { lookBack?: LookBack; tally?: Record<string, number> };

/** What a run may be given beside its input: where it reads from (reconcile-money), and counts already made (the items it reopened). */
export interface RunOptions {
  lookBack?: LookBack;
  tally?: Record<string, number>;
}

/** Checks one page; its provider reads go through `paced`, which keeps the run within its share. */
export type CheckPage = (req: { query: string; pageToken?: string; pageSize: number; sinceMs?: number }, paced: Paced) => Promise<PageOutcome>;

export async function runReconciliation(kind: ReconcileKind, input: ReconcileInput, query: (sinceMs: number) => string, checkPage: CheckPage, options: RunOptions = {}): Promise<DriftReport> {
  const { lookBack, tally } = options;
  const sinceMs = lookBack?.sinceMs ?? Date.now() - lookBackMs(kind, input);
  const progress: Progress = input?.resume ?? {
    startedAt: new Date().toISOString(), query: query(sinceMs), sinceMs, pages: 0, checked: 0, corrected: 0, differences: [],
    ...(lookBack ? { lookBack } : {}), ...(tally ? { tally } : {}),
  };
  let done = false;
  setHandler(reconcileProgressQuery, () => ({ kind, pages: progress.pages, checked: progress.checked, differences: progress.differences.length, corrected: progress.corrected, done }));
  wakeOnRollOver();
  const pageSize = input?.pageSize ?? DEFAULT_PAGE_SIZE;
  // Reads in batches of the run's share of the window (pace.ts).
  const pacer = new ReadPacer(await temporalSide.readReconcileBudget({ reconciliation: RECONCILIATIONS[kind].scheduleId }), progress.nextReadAt);
  let pagesThisRun = 0;
  while (progress.pageToken !== null) {
    // Also onto a new target build, between pages (lib/roll-over.ts).
    if (pagesThisRun >= (input?.pagesPerRun ?? PAGES_PER_RUN) || workflowInfo().continueAsNewSuggested || targetBuildChanged()) {
      await makeContinueAsNewFunc<(i: ReconcileInput) => Promise<DriftReport>>(rollOverOptions())({ ...input, resume: { ...progress, nextReadAt: pacer.nextReadAt } });
    }
    const page = await checkPage({ query: progress.query, pageToken: progress.pageToken, pageSize, ...(progress.sinceMs === undefined ? {} : { sinceMs: progress.sinceMs }) }, pacer.paced);
    progress.pages++;
    pagesThisRun++;
    progress.checked += page.checked;
    progress.corrected += page.corrected;
    progress.differences.push(...page.differences.slice(0, MAX_REPORTED_DIFFERENCES - progress.differences.length));
    progress.pageToken = page.nextPageToken;
    for (const [name, n] of Object.entries(page.tally ?? {})) progress.tally = { ...progress.tally, [name]: (progress.tally?.[name] ?? 0) + n };
  }
  const report: DriftReport = {
    kind,
    startedAt: progress.startedAt,
    finishedAt: new Date().toISOString(),
    checked: progress.checked,
    differences: progress.differences,
    corrected: progress.corrected,
    ...(progress.lookBack ? { lookBack: progress.lookBack } : {}),
    ...(progress.tally ?? {}),
  };
  await temporalSide.recordReport(report);
  done = true;
  return report;
}

/** The run's look-back, from its input or its kind's default; a bad duration fails the run at once. */
export function lookBackMs(kind: ReconcileKind, input: ReconcileInput): number {
  const text = input?.since ?? RECONCILIATIONS[kind].defaultLookBack;
  const ms = parseDuration(text);
  if (ms === undefined) failWith(FailureType.ValidationFailed, `since must be a duration such as "2 hours" or "30m" (got "${text}")`, [{ errors: { since: 'must be a duration' } }]);
  return ms;
}

/** The main queue the reconciliation serves (its own), and the flows on it. */
export function mainQueue(): string {
  return mainQueueOf(workflowInfo().taskQueue);
}

