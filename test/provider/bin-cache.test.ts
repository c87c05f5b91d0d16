/** The BIN cache's clock and refresh rules, with a counting source (the sandbox test covers the real answer). */
import { BinCache, BIN_CACHE_TTL_MS } from '../../src/provider/bin-cache';
import { ProviderError } from '../../src/provider/errors';

function countingSource() {
  const source = {
    calls: 0,
    async listCardBins() {
      source.calls++;
      return [{ cardBinId: `bin_${source.calls}` }];
    },
  };
  return source;
}

describe('BinCache', () => {
  it('serves from the cache for 24 hours, then asks again', async () => {
    let now = 0;
    const source = countingSource();
    const cache = new BinCache(source, { now: () => now });
    await cache.list();
    now = BIN_CACHE_TTL_MS - 1;
    expect(await cache.get('bin_1')).toEqual({ cardBinId: 'bin_1' });
    expect(source.calls).toBe(1);
    now = BIN_CACHE_TTL_MS;
    expect(await cache.get('bin_2')).toEqual({ cardBinId: 'bin_2' });
    expect(source.calls).toBe(2);
  });

  it('shares one request between concurrent readers', async () => {
    const source = countingSource();
    const cache = new BinCache(source);
    await Promise.all([cache.list(), cache.list(), cache.get('bin_1')]);
    expect(source.calls).toBe(1);
  });

  it('refreshes at once on StaleCardBin, and only then', async () => {
    const source = countingSource();
    const cache = new BinCache(source);
    await cache.list();
    expect(await cache.noteCreateCardFailure(new ProviderError({ type: 'ValidationFailed' }))).toBe(false);
    expect(source.calls).toBe(1);
    expect(await cache.noteCreateCardFailure(new ProviderError({ type: 'StaleCardBin' }))).toBe(true);
    expect(source.calls).toBe(2);
    expect(await cache.get('bin_2')).toBeDefined();
  });

  it('does not cache a failed refresh', async () => {
    let fail = true;
    const cache = new BinCache({
      listCardBins: async () => {
        if (fail) throw new ProviderError({ type: 'Timeout' });
        return [{ cardBinId: 'bin_ok' }];
      },
    });
    await expect(cache.list()).rejects.toMatchObject({ type: 'Timeout' });
    fail = false;
    expect(await cache.get('bin_ok')).toBeDefined();
  });

  it('a BIN the provider added after the list was cached is found by one refresh, not refused until tomorrow', async () => {
    const listed = [{ cardBinId: 'bin_old' }];
    let calls = 0;
    const cache = new BinCache({ listCardBins: async () => (calls++, [...listed]) });
    await cache.list();
    listed.push({ cardBinId: 'bin_added_today' });
    expect(await cache.get('bin_added_today')).toEqual({ cardBinId: 'bin_added_today' });
    expect(calls).toBe(2);
    // A BIN the provider does not list either: one refresh per lookup, then reported missing.
    expect(await cache.get('bin_never')).toBeUndefined();
    expect(calls).toBe(3);
    // A BIN in the cache costs no request.
    expect(await cache.get('bin_old')).toBeDefined();
    expect(calls).toBe(3);
  });
});
