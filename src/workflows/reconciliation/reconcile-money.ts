/**
 * reconcile-money (hourly): every money flow on our queue that closed in the look-back window or
 * is still running (fundCard, withdrawFromCard, sendPayout, trackPayout, purchaseEsim,
 * rechargeEsim, and issueCard for its initialAmount), and every money update a card workflow
 * settled in it, against the provider's record: GET /operations/{key} (under every key a version
 * could have derived), GET /payouts/{merOrderNo}, GET /esim/orders/{orderNo}, GET /cards/{cardId}.
 * Every end is compared (completed, failed, OutcomeUnknown, terminated, timed out) but a settled
 * one (`starter settle`); a running card movement for its amount only (how long it has run is
 * sweep-stuck's). It reads only, within reconciliation's share of each window.
 */
import { patched } from '@temporalio/workflow';
import { hoursBetween } from '../../shared/search-attributes';
import { entityQueue } from '../../shared/task-queues';
import { compareClaim, type MoneyClaim, type ProviderSide } from '../../shared/reconcile-checks';
import { MONEY_FLOW_KINDS, literal, type DriftReport, type ReconcileInput } from '../../shared/reconciliation';
import { providerCalls, type ProviderCalls } from '../lib/provider';
import { mainQueue, runReconciliation, temporalSide } from './run';
import { declareVersioning } from '../lib/versioning';

const CLOSED = ['Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'];
/** Card workflows are listed by the hours of the look-back, the last 31 days of it at most (744 hours: a query of bounded size). */
const CARD_UPDATES_LOOK_BACK_MS = 31 * 24 * 3_600_000;
/** Marker: runs also list running money flows and the card workflows that moved money in the look-back (MoneyMovedHour). */
const RUNNING_AND_CARD_UPDATES = 'reconcile-money-running-and-card-updates';
/** Marker (docs/versioning.md): runs also list issueCard, whose initialAmount moves money (a run that ended without its card). */
const EVERY_MONEY_FLOW = 'reconcile-money-every-flow';

export async function reconcileMoney(input: ReconcileInput = {}): Promise<DriftReport> {
  const reads = providerCalls('reconcile');
  const kinds = [...MONEY_FLOW_KINDS, ...(patched(EVERY_MONEY_FLOW) ? ['issueCard'] : [])].map(literal).join(', ');
  const closedSince = (sinceMs: number) => `ExecutionStatus IN (${CLOSED.map(literal).join(', ')}) AND CloseTime >= ${literal(new Date(sinceMs).toISOString())}`;
  // By type too: a flow terminated before its first task never set its FlowKind.
  const flows = `TaskQueue = ${literal(mainQueue())} AND (FlowKind IN (${kinds}) OR WorkflowType IN (${kinds}))`;
  const query = (sinceMs: number) =>
    patched(RUNNING_AND_CARD_UPDATES)
      ? `(${flows} AND (ExecutionStatus = 'Running' OR (${closedSince(sinceMs)}))) OR ` +
        `(WorkflowType = 'cardLifecycle' AND TaskQueue = ${literal(entityQueue(mainQueue()))} AND MoneyMovedHour IN (${hoursBetween(Math.max(sinceMs, Date.now() - CARD_UPDATES_LOOK_BACK_MS), Date.now()).map(literal).join(', ')}))`
      : `${flows} AND ${closedSince(sinceMs)}`;
  return runReconciliation('money', input, query, async (req, paced) => {
    const page = await temporalSide.moneyClaimsPage(req);
    const sides = await paced(page.items, (claim) => providerSide(reads, claim));
    const differences = page.items.flatMap((claim, i) => compareClaim(claim, sides[i]) ?? []);
    return { checked: page.listed, corrected: 0, differences, nextPageToken: page.nextPageToken };
  });
}

/** The provider's record of a claim: one read on its endpoint's budget (an operation, under each key it may be under). */
export async function providerSide(reads: ProviderCalls<'reconcile'>, claim: Pick<MoneyClaim, 'resource' | 'ref' | 'alsoUnder'>): Promise<ProviderSide> {
  switch (claim.resource) {
    case 'operation':
      return reads.reconcileReadOperation({ idempotencyKey: claim.ref, ...(claim.alsoUnder ? { alsoUnder: claim.alsoUnder } : {}) });
    case 'card': {
      const { card, known, windowResetAt } = await reads.reconcileReadCard({ cardId: claim.ref });
      return { known, ...(card ? { status: card.status } : {}), ...(windowResetAt === undefined ? {} : { windowResetAt }) };
    }
    case 'payout':
      return reads.reconcileReadPayout({ merOrderNo: claim.ref });
    case 'esimOrder':
      return reads.reconcileReadEsimOrder({ orderNo: claim.ref });
  }
}

// docs/versioning.md: a schedule's run continued as new over hours: it moves to each new build and keeps markers and replay tests.
declareVersioning('AUTO_UPGRADE', reconcileMoney);
