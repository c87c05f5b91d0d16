/**
 * A late delivery: genuinely signed (the signature checks out), but its X-Timestamp is older
 * than the tolerance, as when the provider redelivers an old event byte for byte. The spec does
 * not say how long the provider redelivers, so such a delivery is not simply refused: it is let
 * through when its eventId (given or derived) was not applied by the entity's workflow and what
 * it says is consistent with the entity's order (statuses never go backwards).
 *
 * Why replay stays harmless: only bytes the provider signed get here (a forger cannot make
 * them); an eventId already applied is answered 200 and not applied again; a status older than
 * the entity's is refused; and the entity workflow applies the event under the same two rules
 * again (entity-inbox.ts), whatever the bridge decided.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { isNewer, statusOf } from '../shared/event-status';
import { entityWorkflowId } from '../shared/ids';
import { entityEventQuery } from '../shared/messages';
import type { ProviderEvent } from '../shared/types';
import type { EntityRef } from '../temporal/entity-signals';

/**
 * `new`: let it through, to the running entity workflow only; `applied`: answered again, not applied
 * again; `out-of-order`: refused; `no-entity`: refused, a late delivery never starts an entity's
 * workflow (its history may be gone: retention, or continue-as-new past its de-duplication window,
 * and the old status would start it afresh: a deleted card's workflow back at ENABLE).
 */
export type LateVerdict = 'new' | 'applied' | 'out-of-order' | 'no-entity';

/**
 * How late a genuinely signed delivery may be: the provider redelivers up to 8 times with growing
 * delays (CONTRACTS §4), well within a day; anything older is a replay, refused without asking.
 */
export const LATE_HORIZON_MS = 24 * 3_600_000;

export async function judgeLateEvent(temporal: Client, entity: EntityRef, event: ProviderEvent): Promise<LateVerdict> {
  let answer: { applied: boolean; state: Parameters<typeof isNewer>[0] };
  try {
    answer = await temporal.workflow.getHandle(entityWorkflowId(entity.kind, entity.entityId)).query(entityEventQuery, event.eventId);
  } catch (err) {
    // No workflow for the entity: a late delivery does not start one.
    if (err instanceof WorkflowNotFoundError || (err as Error)?.name === 'WorkflowNotFoundError') return 'no-entity';
    throw err;
  }
  if (answer.applied) return 'applied';
  const status = statusOf(event);
  const current = answer.state.status;
  const consistent = status === undefined || current === undefined || status === current || isNewer(answer.state, status, event.createdAt);
  return consistent ? 'new' : 'out-of-order';
}
