/**
 * After a delete, the card workflow follows the card to DELETED. The provider answers a delete with
 * DELETING and sends no webhook when the deletion completes (the card's balance then goes back to
 * the wallet), so without reads of its own the workflow said DELETING, with the old balance, until
 * reconcile-cards corrected it a day later. It reads GET /cards/{cardId} (the flows' budget, through
 * the card's coalesced balance read) at growing intervals until the provider says anything but
 * DELETING, or for a day: past that, reconcile-cards corrects the view as before.
 */
import { condition, currentUpdateInfo, workflowInfo } from '@temporalio/workflow';
import type { CardChange } from '../../activities/cards';
import { DELETE_CARD_FLOW_KIND } from '../../shared/open-items';
import type { CardBalance } from './card-balance';
import type { EntityInbox } from './entity-inbox';
import { openItem } from './open-items';
import { itemOf } from './open-item-of';
import { applicationCause } from './provider';
import { isUnknownOutcomeType } from '../../shared/outcome-unknown';

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
    if (this.#running || !this.#deleting()) return;
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

/**
 * The delete's attempt (issue 51; activities/cards.ts records it before the DELETE): owned by this run and
 * the update's ID, with the balance the view knows, which the DELETE returns to the wallet. Its item asks
 * the card from the items' floor on: a deletion completes in seconds, and one read of the card says.
 */
export function deleteAttempt(balance: number | undefined): Pick<CardChange, 'attempt' | 'amount'> {
  const updateId = currentUpdateInfo()?.id;
  if (updateId === undefined) return {};
  const { workflowId, runId } = workflowInfo();
  return {
    attempt: { owner: { workflowId, runId, updateId, action: 'delete' }, flowKind: DELETE_CARD_FLOW_KIND, cadence: { firstAskMs: FIRST_INTERVAL_MS } },
    ...(balance === undefined ? {} : { amount: balance }),
  };
}

/** Whether a delete's failure says it may have taken effect (the provider's error, or an outcome we could not learn). */
export function mayHaveDeleted(err: unknown): boolean {
  const cause = applicationCause(err);
  return isUnknownOutcomeType(cause?.type ?? undefined) || (cause?.details ?? []).some((d) => (d as { mayHaveTakenEffect?: unknown } | null)?.mayHaveTakenEffect === true);
}

/**
 * A delete update that ends unsure opens its attempt as the open item, which asks GET /cards/{cardId}
 * until the card reads DELETING or DELETED (moved) or ENABLE or DISABLE (not moved). An attempt the
 * provider's word settled already stays as it is (temporal/open-items.ts startOpenItem).
 */
export async function openDeleteItem(change: CardChange, err: unknown): Promise<void> {
  if (!change.attempt || !mayHaveDeleted(err)) return;
  const cause = applicationCause(err);
  const { owner, flowKind, cadence } = change.attempt;
  const item = itemOf({ flowKind, owner, input: { cardId: change.cardId, amount: change.amount }, details: cause?.details ?? [], reason: cause?.type ?? 'OutcomeUnknown', keyScope: owner.workflowId });
  await openItem({ ...item, ...(cadence ? { cadence } : {}) });
}
