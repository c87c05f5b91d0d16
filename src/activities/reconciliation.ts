/**
 * Reconciliation's activities (issue 22). Provider reads (one per activity, so each is dispatched
 * on its endpoint's rate-limited queue behind every flow's call, and paced by the workflow to
 * RECONCILE_BUDGET_SHARE of the window: readReconcileBudget) answer
 * "the provider does not know it" as data, not as a failure. The visibility reads, the card
 * workflows' views and the corrections talk to Temporal only (reconciliation-visibility.ts).
 * Nothing here moves money: the provider is only read.
 */
import { Context } from '@temporalio/activity';
import type { ReconciliationMetrics } from '../observability/metrics';
import type { CardBinAnswer } from '../provider/answers';
import type { BinCache } from '../provider/bin-cache';
import type { ProviderClient } from '../provider/client';
import { isProviderError } from '../provider/errors';
import { toCardView } from '../shared/card-rules';
import type { LookBack } from '../shared/reconcile-checks';
import { DIFFERENCE_KINDS, EXPECTED_FLOW_MS, RECONCILIATIONS, countByKind, readBudget, summariseReport, type DriftReport, type ReadBudget, type WindowedRead } from '../shared/reconciliation';
import { RATE_QUEUE_LIMITS } from '../shared/task-queues';
import type { CardView } from '../shared/types';
import { providerCall } from './provider-call';
import { ENDPOINTS } from '../provider-api/endpoints';

/** What the provider says of one thing we asked about; `known: false` when it has no record of it. */
export interface ProviderRecord extends WindowedRead {
  known: boolean;
  /** The key that answered, when not the one asked first. */
  ref?: string;
  status?: string;
  amount?: number;
}

export interface ProviderCardRecord extends WindowedRead {
  known: boolean;
  card?: CardView;
  /** When the provider was read (epoch ms): a card workflow applies only a read newer than its own. */
  readAt: number;
}

export interface ReconciliationActivityDeps {
  provider: ProviderClient;
  bins: BinCache<CardBinAnswer>;
  reconciliationMetrics?: ReconciliationMetrics;
  /** The worker's validated configuration: the provider's window and reconciliation's share of it. */
  reconcileBudget: { windowMs: number; share: number };
}

export function createReconciliationActivities({ provider, bins, reconciliationMetrics, reconcileBudget }: ReconciliationActivityDeps) {
  /**
   * The end of the endpoint's window the read just answered landed in, from the headers the
   * transport keeps: the latest answer of the endpoint in this process, so never an earlier window.
   */
  const windowOf = (endpoint: { key: string }): WindowedRead => {
    const resetAt = provider.rateBudget.get(endpoint.key)?.resetAt;
    return resetAt === undefined ? {} : { windowResetAt: resetAt };
  };
  return {
    /**
     * The pace a run keeps (its share of the window of the endpoints it reads), from the worker's
     * configuration. Every run and continued run asks it first, so it also marks the reconciliation
     * alive (ReconciliationNotRun); runs started before they named themselves here mark nothing.
     */
    async readReconcileBudget({ reconciliation }: { reconciliation?: string } = {}): Promise<ReadBudget> {
      if (reconciliation !== undefined) reconciliationMetrics?.active(reconciliation, Date.now());
      return readBudget(reconcileBudget.windowMs, reconcileBudget.share, [RATE_QUEUE_LIMITS['card-read'], RATE_QUEUE_LIMITS.general]);
    },

    async reconcileReadCard({ cardId }: { cardId: string }): Promise<ProviderCardRecord> {
      const readAt = Date.now();
      const card = await unlessUnknown(() => provider.getCard(cardId));
      const window = windowOf(ENDPOINTS.getCard);
      return card === undefined ? { known: false, readAt, ...window } : { known: true, card: toCardView(card), readAt, ...window };
    },

    /** The operation under the key; when it has none, under each of `alsoUnder` (keys an earlier version derived) until one answers. */
    async reconcileReadOperation({ idempotencyKey, alsoUnder = [] }: { idempotencyKey: string; alsoUnder?: string[] }): Promise<ProviderRecord> {
      for (const key of [idempotencyKey, ...alsoUnder]) {
        const op = await unlessUnknown(() => provider.getOperation(key));
        if (op !== undefined) return { known: true, status: op.status, amount: op.amount, ...(key === idempotencyKey ? {} : { ref: key }), ...windowOf(ENDPOINTS.getOperation) };
      }
      return { known: false, ...windowOf(ENDPOINTS.getOperation) };
    },

    async reconcileReadPayout({ merOrderNo }: { merOrderNo: string }): Promise<ProviderRecord> {
      const payout = await unlessUnknown(() => provider.getPayout(merOrderNo));
      return { ...(payout === undefined ? { known: false } : { known: true, status: payout.status, amount: payout.arriveAmount }), ...windowOf(ENDPOINTS.getPayout) };
    },

    async reconcileReadEsimOrder({ orderNo }: { orderNo: string }): Promise<ProviderRecord> {
      const order = await unlessUnknown(() => provider.getEsimOrder(orderNo));
      return { ...(order === undefined ? { known: false } : { known: true, status: order.status }), ...windowOf(ENDPOINTS.getEsimOrder) };
    },

    /**
     * Refreshes this worker's BIN cache now and says what changed against what it held (no
     * baseline when it held nothing: then nothing is reported as added).
     */
    async reconcileRefreshBins(): Promise<{ before?: string[]; after: string[] }> {
      const before = bins.peek()?.map((b) => b.cardBinId);
      const after = await providerCall(() => bins.refresh());
      return { before, after: after.map((b) => b.cardBinId) };
    },

    /** Ends a run: the gauges of its difference kinds (zeros included), when it ended, and one summary log line. */
    async recordReport(report: DriftReport): Promise<void> {
      const counts = countByKind(report.differences);
      const name = RECONCILIATIONS[report.kind].scheduleId;
      for (const kind of DIFFERENCE_KINDS[report.kind]) reconciliationMetrics?.differences(name, kind, counts[kind] ?? 0);
      if (report.kind === 'stuck') {
        const byFlow: Record<string, number> = Object.fromEntries(Object.keys(EXPECTED_FLOW_MS).map((k) => [k, 0]));
        for (const d of report.differences) byFlow[d.ids.flowKind] = (byFlow[d.ids.flowKind] ?? 0) + 1;
        for (const [flowKind, n] of Object.entries(byFlow)) reconciliationMetrics?.stuck(flowKind, n);
      }
      // reconcile-money's look-back (issue 51): capped, flows closed before the cap were not read.
      const { lookBack } = report as DriftReport & { lookBack?: LookBack };
      if (lookBack) reconciliationMetrics?.lookBackCapped(name, lookBack.capped === true);
      if (lookBack?.capped) Context.current().log.warn(`${name}: its last run started before the maximum look-back; read from ${new Date(lookBack.sinceMs).toISOString()}, flows closed before were not read`, { reconciliation: report.kind, ...lookBack });
      reconciliationMetrics?.ran(name, Date.parse(report.finishedAt) || Date.now());
      Context.current().log.info(summariseReport(report), { reconciliation: report.kind, checked: report.checked, differences: counts, corrected: report.corrected });
    },
  };
}

/** The provider's record, or undefined when it answers that it has none (404). */
async function unlessUnknown<T>(read: () => Promise<T>): Promise<T | undefined> {
  return providerCall(async () => {
    try {
      return await read();
    } catch (err) {
      if (isProviderError(err, 'NotFound')) return undefined;
      throw err;
    }
  });
}
