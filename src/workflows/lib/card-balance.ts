/**
 * The card workflow's balance, read from the provider (issue 22) on demand (issue 52): a money
 * movement only marks the view stale; the card is read when someone asks for a view fresher than
 * the one held (the refreshCardBalance update, which the typed client's and the CLI's `card` send
 * when the view is older than their bound), after each transaction webhook, when reconciliation
 * hands it the provider's card, and, for a stale view nobody asked about, once per
 * IDLE_READ_MS. Before, every burst of movements paid a timer, a read and two workflow tasks, and
 * those reads took most of the general rate class (docs/performance.md, "The balance read on
 * demand"). Webhooks carry no balance, so without reads the view kept CARD_CREATED's figure. Each
 * read keeps the time it was made and the provider's `updatedAt`: an older read never overwrites
 * a newer one by either, and `cardState` shows the time beside the balance. No money rule reads
 * the view (docs/idempotency.md).
 */
import { log, sleep } from '@temporalio/workflow';
import { balanceFresh } from '../../shared/card-rules';
import type { CardView } from '../../shared/types';
import type { EntityInbox } from './entity-inbox';
import { providerCalls } from './provider';

const refreshRetry = { retry: { maximumAttempts: 3, maximumInterval: '5 seconds' } } as const;

/** How long a stale view nobody asks about waits for its read: movements until then share it. */
export const IDLE_READ_MS = 30_000;

export interface BalanceRead {
  availableBalance: number;
  totalConsumption?: number;
  readAt: number;
  /** The card's `updatedAt` as the provider answered it: the provider's own order of its answers. */
  updatedAt?: number;
}

export class CardBalance {
  constructor(
    private readonly cardId: string,
    private readonly inbox: EntityInbox,
    /** Carried across continue-as-new. */
    public last?: BalanceRead,
    /** When the card last moved money through this workflow (epoch ms); carried across continue-as-new. */
    public lastMovedAt?: number,
    /** How long a stale view nobody asks about waits for its read. */
    private readonly idleReadMs = IDLE_READ_MS,
  ) {}

  /** A movement happened since the last read started: the view's balance may not show it. */
  stale(): boolean {
    return this.lastMovedAt !== undefined && (this.last === undefined || this.last.readAt < this.lastMovedAt);
  }

  /** The view was read within `maxAgeMs` and no movement happened since (shared/card-rules.ts balanceFresh). */
  freshWithin(maxAgeMs: number): boolean {
    return balanceFresh({ readAt: this.last?.readAt, movedSince: this.stale() }, maxAgeMs, Date.now());
  }

  /** The idle read's timer under way: when it fires (epoch ms). */
  private idle?: { dueAt: number };

  /** A movement answered: the view is stale from now, and is read within the idle period unless someone asks sooner. */
  moved(): void {
    this.lastMovedAt = Date.now();
    this.readWhenIdle();
  }

  /**
   * One read at `dueAt` (by default an idle period from now) if the view is still stale then; every
   * movement until it fires shares it, so a burst costs one timer and at most one read per period.
   */
  readWhenIdle(dueAt = Date.now() + this.idleReadMs): void {
    if (this.idle) return;
    const idle = { dueAt };
    this.idle = idle;
    void sleep(Math.max(0, dueAt - Date.now()))
      .then(() => (this.stale() ? this.refresh() : undefined))
      .finally(() => {
        if (this.idle === idle) this.idle = undefined;
        // A movement answered while this read was under way is not in it, and found the timer taken: its read comes next.
        if (this.stale()) this.readWhenIdle();
      });
  }

  /** When the idle read is due, for the next run to keep (continue-as-new): undefined when the view is not stale. */
  idleReadDueAt(): number | undefined {
    return this.stale() ? (this.idle?.dueAt ?? Date.now()) : undefined;
  }

  /**
   * Takes a read of the card unless a newer one is held: its status under the inbox's ordering rule, its
   * balance as read. A read is stamped when it starts, which says nothing of how old the provider's
   * answer is (read lag): where both carry the provider's `updatedAt`, the provider's order decides,
   * both ways (an older answer stamped later is not taken; a newer one stamped earlier is).
   */
  apply(card: CardView, readAt: number): void {
    const staleByStamp = this.last !== undefined && this.last.readAt > readAt;
    const order = this.#providerOrder(card);
    if (order === undefined ? staleByStamp : order === 'older') return;
    const consumption = card.totalConsumption === undefined ? {} : { totalConsumption: card.totalConsumption };
    this.last = { availableBalance: card.availableBalance, readAt: Math.max(readAt, this.last?.readAt ?? readAt), ...consumption, ...(card.updatedAt === undefined ? {} : { updatedAt: card.updatedAt }) };
    this.inbox.observe(card.status, { ...card }, readAt);
  }

  /** How the provider orders this answer against the one held, by its `updatedAt`; undefined when either lacks it or they are equal. */
  #providerOrder(card: CardView): 'older' | 'newer' | undefined {
    const held = this.last?.updatedAt;
    if (held === undefined || typeof card.updatedAt !== 'number' || card.updatedAt === held) return undefined;
    return card.updatedAt < held ? 'older' : 'newer';
  }

  /** The read under way (and when it started), and the one queued behind it for everyone who asked meanwhile. */
  private current?: Promise<void>;
  private currentStartedAt?: number;
  private next?: Promise<void>;

  /**
   * A view read at most `maxAgeMs` ago and after the last movement, for someone who asked for one
   * (refreshCardBalance): the view held if it is, the read under way if that one is, else a read.
   */
  readWithin(maxAgeMs: number): Promise<void> {
    if (this.freshWithin(maxAgeMs)) return Promise.resolve();
    const started = this.currentStartedAt;
    if (this.current && started !== undefined && started >= (this.lastMovedAt ?? 0) && Date.now() - started <= maxAgeMs) return this.current;
    return this.refresh();
  }

  /**
   * Reads the card (GET /cards/{cardId}, the flows' budget) once everything before this call
   * happened. At most one read is under way and one queued: a read under way may have started
   * before the movement its caller wants to see, so callers meanwhile share one read after it.
   * Without this, every movement and transaction webhook asked for a read of its own, and a card
   * moving money faster than its endpoint's window piled up reads without end.
   */
  refresh(): Promise<void> {
    if (this.next) return this.next;
    if (!this.current) {
      this.currentStartedAt = Date.now();
      this.current = this.read().finally(() => {
        this.current = undefined;
        this.currentStartedAt = undefined;
      });
      return this.current;
    }
    this.next ??= this.current.then(() => {
      this.next = undefined;
      return this.refresh();
    });
    return this.next;
  }

  /** A read is asked for or under way: a run continuing as new now tells the next one to read at once (no update waits for it). */
  pending(): boolean {
    return Boolean(this.next ?? this.current);
  }

  /** What `cardState` says of the balance's age: when it was read, and whether a movement happened since. */
  freshness(): { movedSinceBalanceRead: boolean; lastMovedAt?: number } {
    return { movedSinceBalanceRead: this.stale(), ...(this.lastMovedAt === undefined ? {} : { lastMovedAt: this.lastMovedAt }) };
  }

  /** One read. A failed read changes nothing: the next one will do. */
  private async read(): Promise<void> {
    const readAt = Date.now();
    try {
      // Few attempts: a money update's answer waits for this read, and a failed one only leaves the view older.
      this.apply(await providerCalls('general', refreshRetry).getCard({ cardId: this.cardId }), readAt);
    } catch (err) {
      log.warn('card balance not refreshed', { cardId: this.cardId, error: (err as Error).message });
    }
  }

  /** The card as the workflow shows it: the latest read's balance when it is newer than the card's last event. */
  view(card: CardView | undefined): { card?: CardView; balanceReadAt?: number } {
    const last = this.last;
    if (!card || !last || last.readAt < (this.inbox.state.lastEventAt ?? 0)) return { card };
    const consumption = last.totalConsumption === undefined ? {} : { totalConsumption: last.totalConsumption };
    return { card: { ...card, availableBalance: last.availableBalance, ...consumption }, balanceReadAt: last.readAt };
  }
}
