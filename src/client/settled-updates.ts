/**
 * A card money update that ended OutcomeUnknown has an open item (docs/idempotency.md, "Open items").
 * Temporal answers a repeat of the same update ID from its own record, the OutcomeUnknown, without
 * asking the card workflow; so the typed client asks the item: once it has closed, its record is the
 * answer. Moved: the movement completed (nothing moves again); not moved: OperationFailed, and a new
 * key may try again. Still open: the OutcomeUnknown as it was.
 */
import type { Client } from '@temporalio/client';
import type { MoneyMovementResult } from '../shared/types';
import { recordOf } from '../temporal/open-items';
import { CardIssuingError, isCardIssuingError } from './errors';

export async function answeredByItem(temporal: Client, err: unknown, owner: { workflowId: string; updateId: string }, request: { cardId: string; amount: number; idempotencyKey: string }): Promise<MoneyMovementResult> {
  if (!isCardIssuingError(err) || err.type !== 'OutcomeUnknown') throw err;
  const record = await recordOf(temporal, owner).catch(() => undefined);
  if (!record) throw err;
  if (record.verdict === 'moved') return { cardId: request.cardId, amount: request.amount, operationId: '', status: 'COMPLETED', idempotencyKey: request.idempotencyKey };
  throw new CardIssuingError({
    type: 'OperationFailed',
    message: `the movement under key ${request.idempotencyKey} was settled NOT MOVED (${record.by === 'provider' ? `the provider said ${record.providerSaid}` : "an operator's word"}, ${record.closedAt}); a new idempotency key may try again`,
    details: [{ itemId: record.itemId, idempotencyKey: request.idempotencyKey }],
    workflowId: owner.workflowId,
    updateId: owner.updateId,
    idempotencyKey: request.idempotencyKey,
    mayHaveTakenEffect: false,
  });
}
