/**
 * Money, in integer cents, moved only by transfer(): each move is an append-only entry and
 * a change to the live balances. violations() replays the entries from scratch and
 * compares, so money created or destroyed outside transfer(), a negative balance, or an
 * idempotency key whose side effect was applied twice all show up.
 */
export const INITIAL_WALLET_CENTS = 100_000_000;

export const WALLET = 'wallet';
/** The world outside the project: merchants, payees, the provider's revenue. */
export const EXTERNAL = 'external';
/** Where the opening balance and control-API credits come from. */
export const CONTROL = 'control';
export const cardAccount = (cardId: string) => `card:${cardId}`;

export type EntryKind =
  | 'OPENING'
  | 'CREDIT'
  | 'CARD_ISSUE'
  | 'CARD_ISSUE_REVERSAL'
  | 'FUNDING'
  | 'WITHDRAWAL'
  | 'CARD_SPEND'
  | 'CARD_CLOSURE'
  | 'ESIM_CHARGE'
  | 'ESIM_REFUND'
  | 'KYC_FEE'
  | 'PAYOUT'
  | 'PAYOUT_REVERSAL';

export interface LedgerEntry {
  seq: number;
  at: number;
  kind: EntryKind;
  from: string;
  to: string;
  amount: number;
  /** What it belongs to: a cardId, orderNo, merOrderNo, kyc id. */
  ref: string;
  /** Set on the entry that is an idempotent call's side effect; at most one entry per key. */
  idempotencyKey?: string;
}

export interface Violation {
  type: 'MONEY_NOT_CONSERVED' | 'BALANCE_MISMATCH' | 'NEGATIVE_BALANCE' | 'KEY_APPLIED_TWICE' | 'BAD_ENTRY';
  detail: string;
}

export class InsufficientBalance extends Error {
  constructor(
    readonly account: string,
    /** How much more the account would need, cents. */
    readonly shortBy: number,
  ) {
    super(`insufficient balance on ${account}: short by ${shortBy}`);
  }
}

/** Accounts that may go below zero: the money supply's sources and sinks. */
const UNBOUNDED = new Set([CONTROL, EXTERNAL]);

export class Ledger {
  readonly #entries: LedgerEntry[] = [];
  readonly #balances = new Map<string, number>();

  constructor(private readonly now: () => number) {
    this.transfer({ kind: 'OPENING', from: CONTROL, to: WALLET, amount: INITIAL_WALLET_CENTS, ref: 'opening' });
  }

  balance(account: string): number {
    return this.#balances.get(account) ?? 0;
  }

  /** Moves money; throws InsufficientBalance (and moves nothing) when `from` would go negative. */
  transfer(e: Omit<LedgerEntry, 'seq' | 'at'>): LedgerEntry {
    if (!Number.isSafeInteger(e.amount) || e.amount <= 0) throw new Error('ledger amounts are positive integer cents');
    if (!UNBOUNDED.has(e.from) && this.balance(e.from) < e.amount) throw new InsufficientBalance(e.from, e.amount - this.balance(e.from));
    const entry: LedgerEntry = { ...e, seq: this.#entries.length + 1, at: this.now() };
    this.#entries.push(Object.freeze(entry));
    this.#balances.set(e.from, this.balance(e.from) - e.amount);
    this.#balances.set(e.to, this.balance(e.to) + e.amount);
    return entry;
  }

  entries(): readonly LedgerEntry[] {
    return this.#entries;
  }

  /** Sums per kind, for the ledger report. */
  totals(): Record<string, number> {
    const sum = (...kinds: EntryKind[]) => this.#entries.filter((x) => kinds.includes(x.kind)).reduce((a, x) => a + x.amount, 0);
    const credits = this.#entries.filter((x) => x.kind === 'CREDIT').reduce((a, x) => a + (x.to === WALLET ? x.amount : -x.amount), 0);
    return {
      issued: sum('CARD_ISSUE'),
      funded: sum('FUNDING'),
      withdrawn: sum('WITHDRAWAL'),
      charged: sum('ESIM_CHARGE', 'KYC_FEE', 'PAYOUT'),
      refunded: sum('ESIM_REFUND', 'PAYOUT_REVERSAL', 'CARD_ISSUE_REVERSAL'),
      consumed: sum('CARD_SPEND'),
      returnedOnClose: sum('CARD_CLOSURE'),
      credited: credits,
    };
  }

  violations(): Violation[] {
    const out: Violation[] = [];
    const replayed = new Map<string, number>();
    const keyUses = new Map<string, number>();
    for (const e of this.#entries) {
      if (!Number.isSafeInteger(e.amount) || e.amount <= 0) out.push({ type: 'BAD_ENTRY', detail: `entry ${e.seq} has amount ${e.amount}` });
      replayed.set(e.from, (replayed.get(e.from) ?? 0) - e.amount);
      replayed.set(e.to, (replayed.get(e.to) ?? 0) + e.amount);
      if (e.idempotencyKey !== undefined) keyUses.set(e.idempotencyKey, (keyUses.get(e.idempotencyKey) ?? 0) + 1);
    }
    const accounts = new Set([...replayed.keys(), ...this.#balances.keys()]);
    let total = 0;
    for (const account of accounts) {
      const live = this.balance(account);
      const expected = replayed.get(account) ?? 0;
      total += live;
      if (live !== expected) out.push({ type: 'BALANCE_MISMATCH', detail: `${account} holds ${live}, its entries give ${expected}` });
      if (!UNBOUNDED.has(account) && live < 0) out.push({ type: 'NEGATIVE_BALANCE', detail: `${account} is at ${live}` });
    }
    // Wallet + cards + what left for the world must equal the opening balance plus credits.
    if (total !== 0) out.push({ type: 'MONEY_NOT_CONSERVED', detail: `balances sum to ${total} instead of 0` });
    const credited = this.totals().credited;
    const held = [...accounts].filter((a) => a !== CONTROL).reduce((a, acc) => a + this.balance(acc), 0);
    if (held !== INITIAL_WALLET_CENTS + credited) {
      out.push({ type: 'MONEY_NOT_CONSERVED', detail: `wallet, cards and outflows hold ${held}; opening plus credits is ${INITIAL_WALLET_CENTS + credited}` });
    }
    for (const [key, uses] of keyUses) {
      if (uses > 1) out.push({ type: 'KEY_APPLIED_TWICE', detail: `idempotency key ${key} applied ${uses} times` });
    }
    return out;
  }
}
