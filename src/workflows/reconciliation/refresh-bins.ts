/**
 * refresh-bins (daily): the BIN cache refreshed from GET /card-bins now, not when its 24 hours
 * run out; BINs the provider added or withdrew since the last run are reported. The last run's
 * list is its report's `bins`, so the baseline is the same whichever worker runs it, and after a
 * restart; without a report that lists them (the first run), the running worker's cache is it.
 */
import type { Difference, DriftReport, ReconcileInput } from '../../shared/reconciliation';
import { providerCalls } from '../lib/provider';
import { mainQueue, runReconciliation, temporalSide } from './run';
import { declareVersioning } from '../lib/versioning';

export async function refreshBins(input: ReconcileInput = {}): Promise<DriftReport> {
  const reads = providerCalls('reconcile');
  let bins: string[] | undefined;
  const report = await runReconciliation('bins', input, () => 'GET /card-bins', async () => {
    // Against the last run's report, not the running worker's cache alone (empty on a fresh worker: nothing reported).
    const reported = await temporalSide.lastReportedBins({ taskQueue: mainQueue() });
    const { before, after } = await reads.reconcileRefreshBins();
    bins = after;
    const known = reported ?? before;
    const differences: Difference[] = [];
    if (known) {
      for (const id of after) if (!known.includes(id)) differences.push({ kind: 'bin-added', ids: { cardBinId: id }, provider: id });
      for (const id of known) if (!after.includes(id)) differences.push({ kind: 'bin-removed', ids: { cardBinId: id }, ours: id });
    }
    // The cache now holds the provider's list: every difference is corrected in our view.
    return { checked: after.length, corrected: differences.length, differences, nextPageToken: null };
  });
  return bins === undefined ? report : { ...report, bins };
}

// docs/versioning.md: a schedule's run continued as new over hours, pinned to each run's build; moves to a new build between pages (run.ts, lib/roll-over.ts).
declareVersioning('PINNED', refreshBins);
