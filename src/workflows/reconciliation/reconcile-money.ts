/**
 * reconcile-money (hourly): every money flow on our queue that closed in the look-back window or
 * is still running (fundCard, withdrawFromCard, sendPayout, trackPayout, purchaseEsim,
 * rechargeEsim, and issueCard for its initialAmount), and every money update a card workflow
 * settled in it, against the provider's record: GET /operations/{key} (under every key a version
 * could have derived), GET /payouts/{merOrderNo}, GET /esim/orders/{orderNo}, GET /cards/{cardId}.
 * Every end is compared (completed, failed, OutcomeUnknown, terminated, timed out) but a settled
 * one (`starter settle`); a running card movement for its amount only (how long it has run is
 * sweep-stuck's). It reads only, within reconciliation's share of each window.
 * Not told `since`, it reads the flows closed since its last completed run STARTED (at least its default
 * look-back, at most MAX_LOOK_BACK_MS: the report's `lookBack` says which), so no run leaves a gap. It
 * opens again every item whose run ended without a record, and opens an item for every
 * `moved-unaccounted` (issue 51): money the provider moved with no record of ours pages until settled.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { hoursBetween } from '../../shared/search-attributes';
import { entityQueue } from '../../shared/task-queues';
import { compareClaim, lookBackFrom, type LookBack, type MoneyClaim, type ProviderSide } from '../../shared/reconcile-checks';
import { saidOf } from '../../shared/open-items';
import { MONEY_FLOW_KINDS, literal, type Difference, type DriftReport, type ReconcileInput } from '../../shared/reconciliation';
import { providerCalls, type ProviderCalls } from '../lib/provider';
import { lookBackMs, mainQueue, runReconciliation, temporalSide, type RunOptions } from './run';
import { declareVersioning } from '../lib/versioning';

const CLOSED = ['Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'];
/** Card workflows are listed by the hours of the look-back, the last 31 days of it at most (744 hours: a query of bounded size). */
const CARD_UPDATES_LOOK_BACK_MS = 31 * 24 * 3_600_000;

/** Items are started and reopened on Temporal only; a list of a thousand may take a while. */
const items = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

export async function reconcileMoney(input: ReconcileInput = {}): Promise<DriftReport> {
  const reads = providerCalls('reconcile');
  // issueCard too: its initialAmount moves money (a run that ended without its card).
  const kinds = [...MONEY_FLOW_KINDS, 'issueCard'].map(literal).join(', ');
  const closedSince = (sinceMs: number) => `ExecutionStatus IN (${CLOSED.map(literal).join(', ')}) AND CloseTime >= ${literal(new Date(sinceMs).toISOString())}`;
  // By type too: a flow terminated before its first task never set its FlowKind.
  const flows = `TaskQueue = ${literal(mainQueue())} AND (FlowKind IN (${kinds}) OR WorkflowType IN (${kinds}))`;
  // Running money flows and closed ones, and the card workflows that moved money in the look-back (MoneyMovedHour).
  const query = (sinceMs: number) =>
    `(${flows} AND (ExecutionStatus = 'Running' OR (${closedSince(sinceMs)}))) OR ` +
    `(WorkflowType = 'cardLifecycle' AND TaskQueue = ${literal(entityQueue(mainQueue()))} AND MoneyMovedHour IN (${hoursBetween(Math.max(sinceMs, Date.now() - CARD_UPDATES_LOOK_BACK_MS), Date.now()).map(literal).join(', ')}))`;
  const options: RunOptions = {};
  if (input.resume === undefined) {
    // Not told `since`: from the last completed run's start (issue 51). Told: read that, and say so (the next run does not read from this one's start).
    options.lookBack = input.since === undefined ? await sinceLastRun(lookBackMs('money', input)) : { sinceMs: Date.now() - lookBackMs('money', input), from: 'input' };
    // First, the items whose run ended without a record (terminated, cancelled, timed out) open again.
    options.tally = { reopenedItems: await items.reopenEndedItems() };
  }
  return runReconciliation('money', input, query, async (req, paced) => {
    const page = await temporalSide.moneyClaimsPage(req);
    const sides = await paced(page.items, (claim) => providerSide(reads, claim));
    const found = page.items.map((claim, i) => ({ claim, side: sides[i], difference: compareClaim(claim, sides[i]) }));
    const { differences, tally } = await asItems(found);
    return { checked: page.listed, corrected: 0, differences, nextPageToken: page.nextPageToken, ...(tally ? { tally } : {}) };
  }, options);
}

/** Where a run not told `since` reads from: its last completed run's start (shared/reconcile-checks.ts lookBackFrom). */
async function sinceLastRun(defaultMs: number): Promise<LookBack> {
  const lookBack = lookBackFrom(Date.now(), await items.lastReconcileRunStart({ kind: 'money' }), defaultMs);
  if (lookBack.capped) log.warn('reconcile-money: the last run started longer ago than the maximum look-back; reading from the cap, flows closed before it are not read', { ...lookBack });
  return lookBack;
}

/**
 * Every moved-unaccounted opens its item (issue 51); one an operator has since settled "moved" is
 * accounted for and leaves the report. A claim still held by its own item stays a report line until
 * that item closes by the provider's word.
 */
async function asItems(found: Array<{ claim: MoneyClaim; side: ProviderSide; difference?: Difference }>): Promise<{ differences: Difference[]; tally?: Record<string, number> }> {
  const differences = found.flatMap((f) => f.difference ?? []);
  const unaccounted = found.filter((f) => f.difference?.kind === 'moved-unaccounted');
  if (unaccounted.length === 0) return { differences };
  const states = await items.openUnaccountedItems({ claims: unaccounted.map(({ claim, side }) => ({ claim, providerSaid: saidOf(side) })) });
  const accounted = new Set(unaccounted.filter((_, i) => states[i].state === 'settled' && states[i].verdict === 'moved').map((f) => f.difference));
  return { differences: differences.filter((d) => !accounted.has(d)), tally: { unaccountedItems: states.filter((s) => s.state === 'open').length } };
}

/** The provider's record of a claim: one read on its endpoint's budget (an operation, under each key it may be under). */
export async function providerSide(reads: ProviderCalls<'reconcile'>, claim: Pick<MoneyClaim, 'resource' | 'ref' | 'alsoUnder'>): Promise<ProviderSide> {
  switch (claim.resource) {
    case 'operation':
      return reads.reconcileReadOperation({ idempotencyKey: claim.ref, ...(claim.alsoUnder ? { alsoUnder: claim.alsoUnder } : {}) });
    case 'card':
    case 'cardDeletion': {
      const { card, known, windowResetAt } = await reads.reconcileReadCard({ cardId: claim.ref });
      return { known, ...(card ? { status: card.status } : {}), ...(windowResetAt === undefined ? {} : { windowResetAt }) };
    }
    case 'payout':
      return reads.reconcileReadPayout({ merOrderNo: claim.ref });
    case 'esimOrder':
      return reads.reconcileReadEsimOrder({ orderNo: claim.ref });
  }
}

// docs/versioning.md: a schedule's run continued as new over hours, pinned to each run's build; moves to a new build between pages (run.ts, lib/roll-over.ts).
declareVersioning('PINNED', reconcileMoney);
