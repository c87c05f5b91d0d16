/**
 * After a delete, the card workflow follows the card to DELETED. The provider answers a delete with
 * DELETING and sends no webhook when the deletion completes (the card's balance then goes back to
 * the wallet), so without reads of its own the workflow said DELETING, with the old balance, until
 * reconcile-cards corrected it a day later. It reads GET /cards/{cardId} (the flows' budget, through
 * the card's coalesced balance read) at growing intervals until the provider says anything but
 * DELETING, or for a day: past that, reconcile-cards corrects the view as before.
 */
import { condition, patched } from '@temporalio/workflow';
import type { CardBalance } from './card-balance';
import type { EntityInbox } from './entity-inbox';

/** docs/versioning.md: card workflows that deleted their card before it wait for reconcile-cards to see DELETED. */
export const CARD_DELETION_FOLLOWED_PATCH = 'card-deletion-followed';

const FIRST_READ_AFTER_MS = 1_000;
const MAX_INTERVAL_MS = 5 * 60_000;
/** A day: reconcile-cards (daily) takes over after it. */
const FOLLOW_FOR_MS = 24 * 3_600_000;

/**
 * Starts following when the card is DELETING (after a delete, or in a run continued while it
 * was); returns at once otherwise. Runs beside the workflow's loop: it ends the workflow only
 * through the status it reads (DELETED is final).
 */
export function followDeletion(inbox: EntityInbox, balance: CardBalance): void {
  const deleting = () => inbox.state.status === 'DELETING';
  if (!deleting() || !patched(CARD_DELETION_FOLLOWED_PATCH)) return;
  void (async () => {
    const until = Date.now() + FOLLOW_FOR_MS;
    let interval = FIRST_READ_AFTER_MS;
    while (Date.now() < until) {
      if (await condition(() => !deleting(), Math.min(interval, Math.max(1, until - Date.now())))) return;
      await balance.refresh();
      if (!deleting()) return;
      interval = Math.min(interval * 2, MAX_INTERVAL_MS);
    }
  })();
}
