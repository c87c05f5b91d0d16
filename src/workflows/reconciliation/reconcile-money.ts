/**
 * reconcile-money (hourly): every money flow on our queue that closed in the look-back window
 * (fundCard, withdrawFromCard, sendPayout, trackPayout, purchaseEsim, rechargeEsim) against the
 * provider's record: GET /operations/{key}, GET /payouts/{merOrderNo}, GET /esim/orders/{orderNo}.
 * Flows still running are sweep-stuck's; a card workflow's own movements show in reconcile-cards.
 * It reads only, within reconciliation's share of each window.
 */
import { compareClaim, type MoneyClaim, type ProviderSide } from '../../shared/reconcile-checks';
import { MONEY_FLOW_KINDS, type DriftReport, type ReconcileInput } from '../../shared/reconciliation';
import { providerCalls, type ProviderCalls } from '../lib/provider';
import { literal, mainQueue, runReconciliation, temporalSide } from './run';

const CLOSED = ['Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'];

export async function reconcileMoney(input: ReconcileInput = {}): Promise<DriftReport> {
  const reads = providerCalls('reconcile');
  const kinds = MONEY_FLOW_KINDS.map(literal).join(', ');
  const query = (sinceMs: number) =>
    // By type too: a flow terminated before its first task never set its FlowKind.
    `TaskQueue = ${literal(mainQueue())} AND (FlowKind IN (${kinds}) OR WorkflowType IN (${kinds})) ` +
    `AND ExecutionStatus IN (${CLOSED.map(literal).join(', ')}) AND CloseTime >= ${literal(new Date(sinceMs).toISOString())}`;
  return runReconciliation('money', input, query, async (req, paced) => {
    const page = await temporalSide.moneyClaimsPage(req);
    const sides = await paced(page.items, (claim) => providerSide(reads, claim));
    const differences = page.items.flatMap((claim, i) => compareClaim(claim, sides[i]) ?? []);
    return { checked: page.listed, corrected: 0, differences, nextPageToken: page.nextPageToken };
  });
}

function providerSide(reads: ProviderCalls<'reconcile'>, claim: MoneyClaim): Promise<ProviderSide> {
  switch (claim.resource) {
    case 'operation':
      return reads.reconcileReadOperation({ idempotencyKey: claim.ref });
    case 'payout':
      return reads.reconcileReadPayout({ merOrderNo: claim.ref });
    case 'esimOrder':
      return reads.reconcileReadEsimOrder({ orderNo: claim.ref });
  }
}
