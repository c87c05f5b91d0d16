/**
 * Issue 51: an item's first ask came from its caller's poll interval (as low as 1 ms), spending the
 * provider's budget on one unsure movement. The workers hold every item and attempt to a floor
 * (OPEN_ITEM_MIN_ASK_MS, default a minute, never below a second).
 */
import { loadConfig } from '../../src/config';
import { withCadenceFloor } from '../../src/shared/open-items';

test('a caller polling every millisecond gets an item asked no sooner than the floor; a slower caller keeps its pace', () => {
  expect(withCadenceFloor({ cadence: { firstAskMs: 1, maxAskIntervalMs: 16 } }, 60_000).cadence).toEqual({ firstAskMs: 60_000, maxAskIntervalMs: 60_000 });
  expect(withCadenceFloor({ cadence: { firstAskMs: 120_000, maxAskIntervalMs: 1_920_000 } }, 60_000).cadence).toEqual({ firstAskMs: 120_000, maxAskIntervalMs: 1_920_000 });
  // No cadence of the caller's: the item's own defaults (5 min, doubling to 6 h) apply, above any floor.
  expect(withCadenceFloor({}, 60_000)).toEqual({});
});

test('OPEN_ITEM_MIN_ASK_MS defaults to a minute and refuses less than a second, naming the variable and the rule', () => {
  const env = { CARD_ISSUING_DEVELOPMENT: 'true' };
  expect(loadConfig(env).provider.openItemMinAskMs).toBe(60_000);
  expect(() => loadConfig({ ...env, OPEN_ITEM_MIN_ASK_MS: '5' })).toThrow(/OPEN_ITEM_MIN_ASK_MS.*at least 1000/);
});
