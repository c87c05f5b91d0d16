/**
 * balanceFresh (shared/card-rules.ts): the one rule by which the client answers cardState from the
 * query and the card workflow decides whether to read the card first (issue 52).
 */
import { balanceFresh } from '../../src/shared/card-rules';
import { isFresh } from '../../src/client/card-view';
import type { CardLifecycleState } from '../../src/shared/types';

test('fresh: read within the bound and no movement since; the bound is inclusive', () => {
  expect(balanceFresh({ readAt: 1_000, movedSince: false }, 500, 1_500)).toBe(true);
  expect(balanceFresh({ readAt: 1_000, movedSince: false }, 499, 1_500)).toBe(false);
  expect(balanceFresh({ readAt: 1_000, movedSince: false }, 0, 1_000)).toBe(true);
});

test('never read, or a movement answered since the read: not fresh, whatever the bound', () => {
  expect(balanceFresh({ movedSince: false }, 86_400_000, 1_000)).toBe(false);
  expect(balanceFresh({ readAt: 1_000, movedSince: true }, 86_400_000, 1_000)).toBe(false);
});

test("the client's check is the same rule on the query's state (an absent movedSinceBalanceRead: no movement)", () => {
  const state = (s: Partial<CardLifecycleState>) => s as CardLifecycleState;
  expect(isFresh(state({ balanceReadAt: 1_000 }), 500, 1_500)).toBe(true);
  expect(isFresh(state({ balanceReadAt: 1_000, movedSinceBalanceRead: true }), 500, 1_000)).toBe(false);
  expect(isFresh(state({}), 500, 1_000)).toBe(false);
});
