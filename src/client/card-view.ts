/**
 * The card's view as the typed client answers it (issue 52): the card workflow's state, and a balance
 * read no older than the caller's bound. A money movement no longer reads the card; its workflow
 * marks the view stale, and the read happens here, when someone wants the balance: a query first
 * (no provider call), and the refreshCardBalance update only when the view held is older than the
 * bound or a movement happened since. The read goes through the card's rate queue like every
 * provider call.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { balanceFresh, freshnessErrors, describeErrors, hasErrors, toCardView } from '../shared/card-rules';
import { cardStateQuery, refreshCardBalanceUpdate } from '../shared/messages';
import type { CardLifecycleState } from '../shared/types';
import { CardIssuingError } from './errors';
import type { CallOptions } from './calls';

/** How old a balance `cardState` accepts unless told otherwise: a few seconds, so a screen polling it reads the card at most every few seconds. */
export const DEFAULT_CARD_VIEW_MAX_AGE_MS = 5_000;

/** `cardState`'s options: the call's own (timeout, abort signal) and how fresh its balance must be. */
export interface CardStateOptions extends CallOptions {
  /**
   * How old the balance may be, in milliseconds (an integer from 0 to a day; default 5,000): an older
   * view, or one a movement happened after, is read from the provider first. `Infinity` never reads
   * (the view as held, which says its age).
   */
  maxAgeMs?: number;
}

/** The card workflow's state with a balance no older than `maxAgeMs`; a closed card's workflow answers as it stands. */
export async function freshCardState(temporal: Client, workflowId: string, opts: CardStateOptions | undefined): Promise<CardLifecycleState> {
  const maxAgeMs = opts?.maxAgeMs ?? DEFAULT_CARD_VIEW_MAX_AGE_MS;
  if (maxAgeMs !== Infinity) assertFreshness(maxAgeMs);
  const handle = temporal.workflow.getHandle(workflowId);
  const held = await handle.query(cardStateQuery);
  if (maxAgeMs === Infinity || isFresh(held, maxAgeMs, Date.now()) || held.status === 'DELETED') return answered(held);
  try {
    return answered(await handle.executeUpdate(refreshCardBalanceUpdate, { args: [{ maxAgeMs }] }));
  } catch (err) {
    // The card's workflow closed since the query (a deleted card's run ends): its state as held is all there is.
    if (err instanceof WorkflowNotFoundError) return answered(held);
    throw err;
  }
}

/** Read within `maxAgeMs` of `now` and after the card's last movement (shared/card-rules.ts balanceFresh). */
export function isFresh(state: CardLifecycleState, maxAgeMs: number, now: number): boolean {
  return balanceFresh({ readAt: state.balanceReadAt, movedSince: state.movedSinceBalanceRead === true }, maxAgeMs, now);
}

function assertFreshness(maxAgeMs: number): void {
  const errors = freshnessErrors({ maxAgeMs });
  if (hasErrors(errors)) throw new CardIssuingError({ type: 'ValidationFailed', message: `invalid cardState options: ${describeErrors(errors)}`, details: [{ errors }] });
}

/** The state as the caller sees it: the card's allowlisted fields, and the balance's age by this process's clock. */
function answered(state: CardLifecycleState): CardLifecycleState {
  const card = state.card ? toCardView(state.card as unknown as Record<string, unknown>) : undefined;
  return { ...state, card, ...(state.balanceReadAt === undefined ? {} : { balanceAgeMs: Math.max(0, Date.now() - state.balanceReadAt) }) };
}
