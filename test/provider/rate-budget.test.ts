/** The rate window bookkeeping and the retry delay, without a server. */
import { RateBudget, fleetRate, parseRateHeaders, retryDelayFor } from '../../src/provider/rate-budget';
import { CARD_ACTION_PRIORITY, RECONCILE_PRIORITY, priorityOf, rateQueueFor } from '../../src/shared/task-queues';

const NOW = 1_767_225_600_000;
const headers = (limit: number, remaining: number, reset: number) => ({
  'x-ratelimit-limit': String(limit),
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': String(reset),
});

describe('RateBudget', () => {
  it('lets calls through while the window has room or is unknown', () => {
    const budget = new RateBudget();
    expect(budget.check('fundCard', NOW)).toBeUndefined();
    budget.record('fundCard', headers(70, 1, NOW + 1000));
    expect(budget.check('fundCard', NOW)).toBeUndefined();
  });

  it('reports the reset to wait for when the window is spent, per endpoint key', () => {
    const budget = new RateBudget();
    budget.record('fundCard', headers(70, 0, NOW + 1000));
    expect(budget.check('fundCard', NOW)).toBe(NOW + 1000);
    expect(budget.check('getCard', NOW)).toBeUndefined();
    expect(budget.check('fundCard', NOW + 1000)).toBeUndefined();
  });

  it('ignores answers without the headers', () => {
    const budget = new RateBudget();
    budget.record('fundCard', headers(70, 0, NOW + 1000));
    budget.record('fundCard', {});
    expect(budget.get('fundCard')).toEqual({ limit: 70, remaining: 0, resetAt: NOW + 1000 });
    expect(parseRateHeaders({ 'x-ratelimit-limit': '1' })).toBeUndefined();
  });
});

describe('retryDelayFor', () => {
  it('is the time until the reset plus the jitter', () => {
    expect(retryDelayFor(NOW + 5000, NOW, 250)).toBe(5250);
  });
  it('never returns a time before the reset, whatever the jitter', () => {
    for (const jitter of [-1000, 0, NaN, -Infinity, 0.4, 999]) {
      expect(NOW + retryDelayFor(NOW + 3210, NOW, jitter)).toBeGreaterThanOrEqual(NOW + 3210);
    }
  });
  it('is just the jitter once the window has reset', () => {
    expect(retryDelayFor(NOW - 10, NOW, 40)).toBe(40);
  });
});

describe('fleetRate', () => {
  it('never lets a window see more than the limit, one second of burst included', () => {
    for (const limit of [1, 70, 100]) {
      for (const windowMs of [3000, 30_000, 45_000, 60_000]) {
        const rate = fleetRate(limit, windowMs);
        expect(rate * (windowMs / 1000 + 1)).toBeLessThanOrEqual(Math.max(limit - 1, 0.1) + 1e-9);
      }
    }
  });
  it('uses at least 95 % of a provider window of 45 s or more', () => {
    for (const limit of [70, 100]) {
      for (const windowMs of [45_000, 60_000]) expect((fleetRate(limit, windowMs) * windowMs) / 1000 / limit).toBeGreaterThanOrEqual(0.95);
    }
  });
});

describe('rateQueueFor', () => {
  it('gives the hot card endpoints queues of their own and leaves every other call on its rate class', () => {
    expect(rateQueueFor('general', 'createCard')).toBe('card-create');
    expect(rateQueueFor('general', 'getCard')).toBe('card-read');
    expect(rateQueueFor('general', 'getPayout')).toBe('general');
    expect(rateQueueFor('general', 'constructor')).toBe('general');
    expect(rateQueueFor('funding', 'getOperation')).toBe('funding');
  });

  it("puts reconciliation's reads on the flows' queues of their endpoints (their priority, not a queue, sets them apart)", () => {
    expect(rateQueueFor('reconcile', 'reconcileReadCard')).toBe('card-read');
    expect(rateQueueFor('reconcile', 'reconcileReadOperation')).toBe('general');
    expect(rateQueueFor('reconcile', 'reconcileReadPayout')).toBe('general');
    expect(priorityOf('reconcile')).toBe(RECONCILE_PRIORITY);
    expect(priorityOf('general')).toBeUndefined();
  });

  it("puts a card action ahead of the bulk steps of longer flows on the general queue (issue 52), and leaves everything else at the server's default", () => {
    for (const action of ['applyCardChange', 'changeCard']) expect(priorityOf('general', action)).toBe(CARD_ACTION_PRIORITY);
    expect(priorityOf('sensitive', 'revealSensitiveCard')).toBe(CARD_ACTION_PRIORITY);
    for (const bulk of ['submitKycForm', 'uploadKycDocument', 'createPayout', 'placeEsimOrder', 'getCard']) expect(priorityOf('general', bulk)).toBeUndefined();
    expect(priorityOf('reconcile', 'reconcileReadCard')).toBe(RECONCILE_PRIORITY);
    expect(CARD_ACTION_PRIORITY).toBeLessThan(3);
  });
});
