/**
 * A card money update that ended OutcomeUnknown has an open item (docs/idempotency.md, "Open items").
 * Temporal answers a repeat of the same update ID from its own record, the OutcomeUnknown, without
 * asking the card workflow; so the typed client asks the item: once it has closed, its record is the
 * answer. Moved: the movement completed (nothing moves again); not moved: OperationFailed, and a new
 * key may try again. Still open: the OutcomeUnknown as it was.
 *
 * `mayHaveTakenEffect` of a "not moved" (issue 51, docs/idempotency.md, "Open items"): false when the
 * provider stated a terminal failed status (FAILED, a cancelled or refunded record), and when an
 * operator settled it, their word recorded as "settled by an operator" with their note (the settlement
 * is the one other way an item closes: the operator checked at the provider, and a word the provider
 * contradicts is refused). True when the item closed on the provider's silence (no record under the
 * key once it outlasted any read lag): no status was stated, so the caller is told the verdict and
 * that money may still have moved.
 */
import type { Client } from '@temporalio/client';
import type { ClosedItem } from '../shared/open-items';
import { phaseOf, type StatusResource } from '../shared/statuses';
import type { MoneyMovementResult } from '../shared/types';
import { recordOf } from '../temporal/open-items';
import { CardIssuingError, isCardIssuingError } from './errors';

export async function answeredByItem(temporal: Client, err: unknown, owner: { workflowId: string; updateId: string }, request: { cardId: string; amount: number; idempotencyKey: string }): Promise<MoneyMovementResult> {
  if (!isCardIssuingError(err) || err.type !== 'OutcomeUnknown') throw err;
  const record = await recordOf(temporal, owner).catch(() => undefined);
  if (!record) throw err;
  if (record.verdict === 'moved') return { cardId: request.cardId, amount: request.amount, operationId: '', status: 'COMPLETED', idempotencyKey: request.idempotencyKey };
  const closing = notMovedBy(record);
  throw new CardIssuingError({
    type: 'OperationFailed',
    message: `the movement under key ${request.idempotencyKey} was settled NOT MOVED (${closing.said}, ${record.closedAt}); ${closing.stated ? 'a new idempotency key may try again' : 'no status was stated, so it may still have moved: ask the provider before a new key tries again'}`,
    details: [{ itemId: record.itemId, idempotencyKey: request.idempotencyKey, by: record.by, providerSaid: record.providerSaid, ...(record.note === undefined ? {} : { note: record.note }) }],
    workflowId: owner.workflowId,
    updateId: owner.updateId,
    idempotencyKey: request.idempotencyKey,
    mayHaveTakenEffect: !closing.stated,
  });
}

/** Who closed the item "not moved" and whether that is a stated end: the provider's terminal failed status, or an operator's settlement. */
function notMovedBy(record: ClosedItem): { said: string; stated: boolean } {
  if (record.by === 'operator') return { said: `settled by an operator${record.note ? `: ${record.note}` : ''}`, stated: true };
  const resource: StatusResource = record.item.lookup?.resource ?? 'operation';
  const phase = phaseOf(resource, record.providerSaid);
  if (phase === 'failed' || phase === 'cancelled') return { said: `the provider said ${record.providerSaid}`, stated: true };
  return { said: `the provider showed no record under the key (${record.providerSaid}) once it outlasted any read lag; no status was stated`, stated: false };
}
