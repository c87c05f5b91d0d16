/**
 * The card workflow's small rules (card-lifecycle.ts): how it keeps its recent transactions, answers a
 * repeated update, runs operations one at a time, refuses updates while it rolls over, and refuses
 * bad input in a validator. Kept apart so the workflow's file reads as its handlers.
 */
import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { describeErrors, hasErrors, toCardView } from '../../shared/card-rules';
import { FailureType, type FieldErrors } from '../../shared/failures';
import type { CardTransaction, MoneyMovementResult, ProviderEvent, UpdateOutcome } from '../../shared/types';
import type { InboxSnapshot } from './entity-inbox';

const MAX_RECENT_TRANSACTIONS = 50;
/** How soon an update refused while the run rolls over may be sent again: a continue-as-new takes a workflow task. */
const OVERDUE_RETRY_AFTER_MS = 1000;

/** A merchant name longer than this is cut: 50 of them carried through continue-as-new must stay small. */
const MAX_MERCHANT_NAME = 128;

export function recordTransaction(transactions: CardTransaction[], event: ProviderEvent): void {
  if (event.eventType !== 'CARD_TRANSACTION') return;
  const d = event.data as Partial<CardTransaction>;
  // Each text as far as its kind goes: the recent transactions travel through every continue-as-new.
  const text = (v: unknown, max: number) => (typeof v === 'string' ? v.slice(0, max) : undefined);
  transactions.unshift({
    eventId: event.eventId,
    amount: Number(d.amount ?? 0),
    currency: text(d.currency, 8),
    merchantName: text(d.merchantName, MAX_MERCHANT_NAME),
    status: text(d.status, 64),
    createdAt: event.createdAt,
  });
  transactions.splice(MAX_RECENT_TRANSACTIONS);
}

/** The first outcome of an update ID, again: its result, or its failure. */
export function answerAgain(outcome: UpdateOutcome): MoneyMovementResult {
  if ('result' in outcome) return outcome.result;
  throw ApplicationFailure.create({ type: outcome.failure.type, message: outcome.failure.message, details: outcome.failure.details, nonRetryable: true });
}

/** Runs operations on the card one at a time, in the order they were accepted. */
export function serialiser() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(op: () => Promise<T>): Promise<T> => {
    const run = tail.then(op, op);
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * A run continues as new once every update it accepted has finished (entity-loop.ts), so a steady
 * stream of updates, each accepted while another runs, kept it from ever rolling over until
 * Temporal's history limit ended it. Past its limit by a tenth, the run takes no new update: those
 * it holds finish and it rolls over. The refusal is written nothing to history (a validator), and
 * the same update, sent again in a moment under its update ID, lands on the new run.
 */
export function refuseWhileOverdue(cardId: string, maxHistory: number): void {
  const limit = maxHistory + Math.ceil(maxHistory / 10);
  if (workflowInfo().historyLength <= limit) return;
  throw ApplicationFailure.create({
    type: FailureType.RateLimited,
    message: `card/${cardId} is continuing as new after a steady stream of updates: nothing was done; send this update again, under the same update ID, in a moment`,
    details: [{ retryAfterMs: OVERDUE_RETRY_AFTER_MS, historyLength: workflowInfo().historyLength, limit }],
    nonRetryable: true,
  });
}

/** The idle period a start asked for, within 1 s to an hour; the default otherwise (a start's input is not validated elsewhere). */
export function idleReadMsOf(asked: unknown): number | undefined {
  return Number.isInteger(asked) && (asked as number) >= 1000 && (asked as number) <= 3_600_000 ? (asked as number) : undefined;
}

/** A validator that throws refuses the update before it is written to history. */
export function rejectIf(errors: FieldErrors, type: string = FailureType.ValidationFailed): void {
  if (hasErrors(errors)) throw ApplicationFailure.create({ type, message: describeErrors(errors), details: [{ errors }], nonRetryable: true });
}

export function refuseUnauthorised(errors: FieldErrors): void {
  rejectIf(errors, FailureType.Unauthorized);
}


/**
 * The inbox as the next run carries it: the card's data cut to its view's allowlist (toCardView).
 * CARD_CREATED's webhook brings the cardholder's contact data (email, mobile, billing address); the
 * view never showed it, but the whole webhook body travelled in every continue-as-new input. The
 * view is the same either way (state() cuts it to the same fields), and a CAN input is not compared
 * on replay, so this needs no marker.
 */
export function carriedSnapshot(snapshot: InboxSnapshot, cardId: string): InboxSnapshot {
  const data = snapshot.state.data;
  return data === undefined ? snapshot : { ...snapshot, state: { ...snapshot.state, data: { ...toCardView({ ...data, cardId }) } } };
}
