/**
 * A standalone fundCard/withdrawFromCard tells the card's workflow that it completed, so the
 * card workflow reads its balance again (lib/card-balance.ts). No card workflow running: nobody to tell.
 * Flows started since marker money-flow-one-marker are told for by their activity (activities/funding.ts
 * tellCardIfCompleted); this signal stays for histories recorded before it.
 */
import { getExternalWorkflowHandle, log, patched, workflowInfo } from '@temporalio/workflow';
import { entityWorkflowId } from '../../shared/ids';
import { cardMoneyMovedSignal } from '../../shared/messages';
import type { MoneyMovementResult } from '../../shared/types';

/** docs/versioning.md: a movement started before it tells nobody. */
export const TELL_CARD_PATCH = 'money-flow-tells-card';

/** Tells the card workflow, then hands the movement's result on unchanged. */
export async function tellCardWorkflow(result: MoneyMovementResult): Promise<MoneyMovementResult> {
  if (!patched(TELL_CARD_PATCH)) return result;
  try {
    await getExternalWorkflowHandle(entityWorkflowId('card', result.cardId)).signal(cardMoneyMovedSignal, { workflowId: workflowInfo().workflowId });
  } catch (err) {
    log.info('no card workflow to tell of the movement', { cardId: result.cardId, error: (err as Error).message });
  }
  return result;
}
