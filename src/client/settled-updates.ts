/**
 * An end that may have moved money has an open item (docs/idempotency.md, "Open items"): a card money
 * update's, or a flow run's. A repeat of the call is answered from that item, never by moving again:
 * Temporal answers a repeated update ID from its own record (the OutcomeUnknown) without asking the
 * card workflow, and a repeated flow start under the key follows the run that ended unsure instead of
 * starting another (flow-starts.ts; issue 51, item 5). So the typed client asks the item: once it has
 * closed, its record is the answer. Moved: the movement completed (nothing moves again); not moved:
 * OperationFailed, and a new key may try again. Still open: the end as it was, naming the item.
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
import type { ClosedItem, OpenItemOwner } from '../shared/open-items';
import { phaseOf, type StatusResource } from '../shared/statuses';
import type { MoneyMovementResult } from '../shared/types';
import { itemStateOf } from '../temporal/open-items';
import { CardIssuingError, isCardIssuingError } from './errors';

/** A card money update's unsure end, answered by its item (open-item/card/<cardId>/update/<updateId>); moved: the movement. */
export function answeredByItem(temporal: Client, err: unknown, owner: { workflowId: string; updateId: string }, request: { cardId: string; amount: number; idempotencyKey: string }): Promise<MoneyMovementResult> {
  return answerOfItem(temporal, err, owner, request.idempotencyKey, () => ({ cardId: request.cardId, amount: request.amount, operationId: '', status: 'COMPLETED', idempotencyKey: request.idempotencyKey }));
}

/**
 * A flow run's unsure end (issue 51, item 5), answered by that run's item (open-item/<workflowId>/<runId>)
 * as an update's is: a repeat of the call under its key follows the run instead of starting another
 * (flow-starts.ts). Moved: SettledMoved, naming the record, since a flow's result (a card, an eSIM's
 * QR code, a payout's record) cannot be rebuilt from it.
 */
export function runAnsweredByItem<R>(temporal: Client, err: unknown, owner: { workflowId: string; runId: string }, idempotencyKey: string): Promise<R> {
  return answerOfItem<R>(temporal, err, owner, idempotencyKey, (record) => {
    throw new CardIssuingError({
      type: 'SettledMoved',
      message: `${owner.workflowId} under key ${idempotencyKey} MOVED: its open item ${record.itemId} was settled moved (${closedBy(record)}, ${record.closedAt}); the run's result cannot be rebuilt from the record: read it with \`npm run starter -- settle ${record.itemId}\` (nothing moves again under this key)`,
      details: [itemDetail(record, idempotencyKey)],
      workflowId: owner.workflowId,
      idempotencyKey,
      mayHaveTakenEffect: true,
    });
  });
}

/**
 * An end that may have taken effect, answered by its owner's item: while it is open, the end itself
 * naming the item and how to settle it; once it closed, its record (moved: `moved`; not moved:
 * OperationFailed). Any other end, or an owner with no item, is answered as it is.
 */
async function answerOfItem<R>(temporal: Client, err: unknown, owner: OpenItemOwner, idempotencyKey: string, moved: (record: ClosedItem) => R): Promise<R> {
  if (!isCardIssuingError(err) || !err.mayHaveTakenEffect) throw err;
  const state = await itemStateOf(temporal, owner).catch(() => undefined);
  if (!state) throw err;
  const record = state.record;
  if (!record) throw stillOpen(err, state.itemId);
  if (record.verdict === 'moved') return moved(record);
  const closing = notMovedBy(record);
  throw new CardIssuingError({
    type: 'OperationFailed',
    message: `the movement under key ${idempotencyKey} was settled NOT MOVED (${closing.said}, ${record.closedAt}); ${closing.stated ? 'a new idempotency key may try again' : 'no status was stated, so it may still have moved: ask the provider before a new key tries again'}`,
    details: [itemDetail(record, idempotencyKey)],
    workflowId: owner.workflowId,
    ...(owner.updateId === undefined ? {} : { updateId: owner.updateId }),
    idempotencyKey,
    mayHaveTakenEffect: !closing.stated,
  });
}

/** The end as it was, naming its open item and how to settle it (once: a repeat is answered the same). */
function stillOpen(err: CardIssuingError, itemId: string): CardIssuingError {
  const settle = `npm run starter -- settle ${itemId}`;
  if (err.details.some((d) => (d as { itemId?: unknown } | null)?.itemId === itemId)) return err;
  return new CardIssuingError({
    type: err.type,
    message: `${err.message} [open item ${itemId}, still open: it closes on the provider's final word or an operator's \`${settle}\`; never try again under a new key while it is open]`,
    details: [...err.details, { itemId, open: true, settle }],
    ...(err.workflowId === undefined ? {} : { workflowId: err.workflowId }),
    ...(err.updateId === undefined ? {} : { updateId: err.updateId }),
    ...(err.idempotencyKey === undefined ? {} : { idempotencyKey: err.idempotencyKey }),
    mayHaveTakenEffect: true,
    cause: err,
  });
}

function itemDetail(record: ClosedItem, idempotencyKey: string): Record<string, unknown> {
  return { itemId: record.itemId, idempotencyKey, verdict: record.verdict, by: record.by, providerSaid: record.providerSaid, ...(record.item.lookup ? { lookup: record.item.lookup.ref } : {}), ...(record.note === undefined ? {} : { note: record.note }) };
}

function closedBy(record: ClosedItem): string {
  return record.by === 'operator' ? `settled by an operator${record.note ? `: ${record.note}` : ''}` : `the provider said ${record.providerSaid}`;
}

/** Who closed the item "not moved" and whether that is a stated end: the provider's terminal failed status, or an operator's settlement. */
function notMovedBy(record: ClosedItem): { said: string; stated: boolean } {
  if (record.by === 'operator') return { said: `settled by an operator${record.note ? `: ${record.note}` : ''}`, stated: true };
  const resource: StatusResource = record.item.lookup?.resource ?? 'operation';
  const phase = phaseOf(resource, record.providerSaid);
  if (phase === 'failed' || phase === 'cancelled') return { said: `the provider said ${record.providerSaid}`, stated: true };
  return { said: `the provider showed no record under the key (${record.providerSaid}) once it outlasted any read lag; no status was stated`, stated: false };
}
