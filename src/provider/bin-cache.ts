/**
 * BIN metadata, cached for the 24 hours the provider allows, and refreshed at once when
 * POST /cards answers that a cardBinId is stale (a 400 with `cardBinId` in its errors).
 * Concurrent readers share one refresh; a failed refresh is not cached. A BIN missing from a
 * cached list triggers one refresh before it is reported missing: the provider may have added
 * it since the list was read.
 */
import { isProviderError } from './errors';

export const BIN_CACHE_TTL_MS = 24 * 60 * 60 * 1000;

export interface BinSource<TBin> {
  listCardBins(): Promise<TBin[]>;
}

export interface BinCacheOptions {
  ttlMs?: number;
  now?: () => number;
}

export class BinCache<TBin extends { cardBinId: string }> {
  readonly #source: BinSource<TBin>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #entry?: { bins: TBin[]; fetchedAt: number };
  #refreshing?: Promise<TBin[]>;

  constructor(source: BinSource<TBin>, opts: BinCacheOptions = {}) {
    this.#source = source;
    this.#ttlMs = opts.ttlMs ?? BIN_CACHE_TTL_MS;
    this.#now = opts.now ?? Date.now;
  }

  /** Every BIN, from the cache while it is younger than the TTL. */
  async list(): Promise<TBin[]> {
    return this.#cached() ?? this.refresh();
  }

  /** One BIN by id, or undefined when the provider, asked now, does not list it. */
  async get(cardBinId: string): Promise<TBin | undefined> {
    const find = (bins: TBin[]) => bins.find((b) => b.cardBinId === cardBinId);
    const cached = this.#cached();
    if (cached === undefined) return find(await this.refresh());
    return find(cached) ?? find(await this.refresh());
  }

  #cached(): TBin[] | undefined {
    const entry = this.#entry;
    return entry && this.#now() - entry.fetchedAt < this.#ttlMs ? entry.bins : undefined;
  }

  /** The cached list as it stands, without asking the provider (undefined when none is cached). */
  peek(): TBin[] | undefined {
    return this.#entry?.bins;
  }

  /** Forgets the cached list; the next read asks the provider. */
  invalidate(): void {
    this.#entry = undefined;
  }

  /** Asks the provider now; concurrent callers share the one request. */
  refresh(): Promise<TBin[]> {
    this.#refreshing ??= this.#fetch().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  /**
   * To be called with any error of POST /cards: on StaleCardBin the list is refreshed at
   * once (so the next decision uses current BINs) and true is returned.
   */
  async noteCreateCardFailure(err: unknown): Promise<boolean> {
    if (!isProviderError(err, 'StaleCardBin')) return false;
    this.invalidate();
    await this.refresh();
    return true;
  }

  async #fetch(): Promise<TBin[]> {
    const bins = await this.#source.listCardBins();
    this.#entry = { bins, fetchedAt: this.#now() };
    return bins;
  }
}
