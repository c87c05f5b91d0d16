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

const FIRST_INTERVAL_MS = 1_000;
const MAX_INTERVAL_MS = 5 * 60_000;
/** A day: reconcile-cards (daily) takes over after it. */
const FOLLOW_FOR_MS = 24 * 3_600_000;

/** Where a follow stands: carried across continue-as-new, so neither its day nor its pace starts over. */
export interface DeletionFollow {
  until: number;
  intervalMs: number;
}

export class DeletionFollower {
  #follow: DeletionFollow | undefined;
  #running = false;

  constructor(
    private readonly inbox: EntityInbox,
    private readonly balance: CardBalance,
    follow?: DeletionFollow,
  ) {
    this.#follow = follow;
  }

  /** The follow under way (or ended), for continue-as-new. */
  get state(): DeletionFollow | undefined {
    return this.#follow;
  }

  /**
   * Follows the card while it is DELETING: after a delete (`afterDelete`: a follow whose day ran
   * out starts anew), or in a run continued while it was (the follow carries on where it was).
   * Does nothing otherwise, or when a follow already runs (a repeated delete). It ends the
   * workflow only through the status it reads (DELETED is final).
   */
  follow(afterDelete = false): void {
    if (this.#running || !this.#deleting() || !this.balance.reads() || !patched(CARD_DELETION_FOLLOWED_PATCH)) return;
    this.#running = true;
    if (afterDelete && this.#follow && this.#follow.until <= Date.now()) this.#follow = undefined;
    this.#follow ??= { until: Date.now() + FOLLOW_FOR_MS, intervalMs: FIRST_INTERVAL_MS };
    // A cancelled workflow ends its loop; this background read has nothing to add to that.
    void this.#run()
      .catch(() => undefined)
      .finally(() => (this.#running = false));
  }

  #deleting(): boolean {
    return this.inbox.state.status === 'DELETING';
  }

  async #run(): Promise<void> {
    const follow = this.#follow!;
    while (Date.now() < follow.until) {
      const wait = Math.max(1, Math.min(follow.intervalMs, follow.until - Date.now()));
      let left = await condition(() => !this.#deleting(), wait);
      if (!left) {
        await this.balance.refresh();
        left = !this.#deleting();
      }
      if (left) {
        // The card left DELETING (our read, a webhook or reconciliation said so): a later delete follows afresh.
        this.#follow = undefined;
        return;
      }
      follow.intervalMs = Math.min(follow.intervalMs * 2, MAX_INTERVAL_MS);
    }
  }
}
