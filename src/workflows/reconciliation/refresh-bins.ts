/**
 * refresh-bins (daily): the BIN cache refreshed from GET /card-bins now, not when its 24 hours
 * run out; BINs the provider added or withdrew since the cache was filled are reported.
 */
import type { Difference, DriftReport, ReconcileInput } from '../../shared/reconciliation';
import { providerCalls } from '../lib/provider';
import { runReconciliation } from './run';

export async function refreshBins(input: ReconcileInput = {}): Promise<DriftReport> {
  const reads = providerCalls('reconcile');
  return runReconciliation('bins', input, () => 'GET /card-bins', async () => {
    const { before, after } = await reads.reconcileRefreshBins();
    const differences: Difference[] = [];
    if (before) {
      for (const id of after) if (!before.includes(id)) differences.push({ kind: 'bin-added', ids: { cardBinId: id }, provider: id });
      for (const id of before) if (!after.includes(id)) differences.push({ kind: 'bin-removed', ids: { cardBinId: id }, ours: id });
    }
    // The cache now holds the provider's list: every difference is corrected in our view.
    return { checked: after.length, corrected: differences.length, differences, nextPageToken: null };
  });
}
