/**
 * reconcile-cards (daily): every card with a running card workflow, its status and balance
 * against GET /cards/{cardId}. A card workflow whose view differs is given the provider's card
 * (its view is corrected, never the provider's); a card the provider does not know is reported.
 */
import { compareCard } from '../../shared/reconcile-checks';
import { literal, type DriftReport, type ReconcileInput } from '../../shared/reconciliation';
import { entityQueue } from '../../shared/task-queues';
import { providerCalls } from '../lib/provider';
import { mainQueue, runReconciliation, temporalSide } from './run';
import { declareVersioning } from '../lib/versioning';

export async function reconcileCards(input: ReconcileInput = {}): Promise<DriftReport> {
  const reads = providerCalls('reconcile');
  const query = () => `WorkflowType = 'cardLifecycle' AND ExecutionStatus = 'Running' AND TaskQueue = ${literal(entityQueue(mainQueue()))}`;
  return runReconciliation('cards', input, query, async (req, paced) => {
    const page = await temporalSide.cardViewsPage(req);
    const provider = await paced(page.items, (view) => reads.reconcileReadCard({ cardId: view.cardId }));
    const differences = page.items.flatMap((view, i) => compareCard(view, provider[i]));
    const corrections = page.items.flatMap((view, i) => {
      const read = provider[i];
      const differs = differences.some((d) => d.ids.cardId === view.cardId);
      return differs && read.known && read.card ? [{ workflowId: view.workflowId, card: read.card, readAt: read.readAt }] : [];
    });
    const corrected = corrections.length > 0 ? await temporalSide.correctCardViews({ corrections }) : 0;
    return { checked: page.items.length, corrected, differences, nextPageToken: page.nextPageToken };
  });
}

// docs/versioning.md: a schedule's run continued as new over hours, pinned to each run's build; moves to a new build between pages (run.ts, lib/roll-over.ts).
declareVersioning('PINNED', reconcileCards);
