/** Status ordering (src/shared/statuses.ts) and the entity inbox's use of it (isNewer, statusOf): pure. */
import { isFinal, isUnknownStatus, phaseOf, statusRank, STATUS_TABLE, type StatusResource } from '../../src/shared/statuses';
import { isNewer, statusOf } from '../../src/workflows/lib/entity-inbox';
import type { EntityState, ProviderEvent } from '../../src/shared/types';

describe('phaseOf and isFinal', () => {
  it.each([
    ['card', 'CREATING', 'pending'],
    ['card', 'ENABLE', 'succeeded'],
    ['card', 'FAILED', 'failed'],
    ['operation', 'PROCESSING', 'pending'],
    ['operation', 'COMPLETED', 'succeeded'],
    ['operation', 'FAILED', 'failed'],
    ['kyc', 'PENDING', 'pending'],
    ['kyc', 'APPROVED', 'succeeded'],
    ['kyc', 'REJECTED', 'failed'],
    ['esimOrder', 'PAID', 'pending'],
    // An order that FAILED is refunded next: not the end yet.
    ['esimOrder', 'FAILED', 'pending'],
    ['esimOrder', 'ISSUED', 'succeeded'],
    ['esimOrder', 'REFUNDED', 'failed'],
    ['payout', 'PROCESSING', 'pending'],
    ['payout', 'COMPLETED', 'succeeded'],
    ['payout', 'SUCCESS', 'succeeded'],
    ['payout', 'FAILED', 'failed'],
    ['payout', 'CANCELLED', 'cancelled'],
    ['payout', 'CANCELED', 'cancelled'],
  ] as const)('%s %s is %s', (resource, status, phase) => {
    expect(phaseOf(resource, status)).toBe(phase);
    expect(isFinal(resource, status)).toBe(phase !== 'pending');
  });

  it('a status the table does not know, or none, is pending: the flow keeps waiting instead of failing', () => {
    expect(phaseOf('card', 'SUSPENDED')).toBe('pending');
    expect(isFinal('payout', 'ON_HOLD')).toBe(false);
    expect(isFinal('kyc', undefined)).toBe(false);
    // Spelling is the provider's: a lower-case word is not ours to guess.
    expect(isFinal('kyc', 'approved')).toBe(false);
    expect(isFinal('unrouted', 'COMPLETED')).toBe(false);
  });
});

describe('isUnknownStatus', () => {
  it('flags a status missing from the resource\'s table, and nothing else', () => {
    expect(isUnknownStatus('kyc', 'IN_REVIEW')).toBe(true);
    expect(isUnknownStatus('kyc', 'PENDING')).toBe(false);
    // A word known for another resource is still unknown here.
    expect(isUnknownStatus('card', 'APPROVED')).toBe(true);
    expect(isUnknownStatus('kyc', undefined)).toBe(false);
    expect(isUnknownStatus('unrouted', 'ANYTHING')).toBe(true);
  });
});

describe('statusRank', () => {
  it('orders each resource\'s life: the first status lowest, a final one never below a pending one', () => {
    for (const resource of Object.keys(STATUS_TABLE) as StatusResource[]) {
      const entries = Object.entries(STATUS_TABLE[resource]);
      const pendingRanks = entries.filter(([s]) => phaseOf(resource, s) === 'pending').map(([s]) => statusRank(resource, s));
      const finalRanks = entries.filter(([s]) => isFinal(resource, s)).map(([s]) => statusRank(resource, s));
      expect([resource, Math.min(...finalRanks) >= Math.max(...pendingRanks)]).toEqual([resource, true]);
    }
  });

  it('ranks a card\'s life in order, and an unknown status between the first and the final ones', () => {
    const ranks = ['CREATING', 'ENABLE', 'DELETING', 'DELETED'].map((s) => statusRank('card', s));
    expect([...ranks].sort((a, b) => a - b)).toEqual(ranks);
    expect(new Set(ranks).size).toBe(4);
    expect(statusRank('esimOrder', 'ON_HOLD')).toBeGreaterThan(statusRank('esimOrder', 'PAID'));
    expect(statusRank('esimOrder', 'ON_HOLD')).toBeLessThan(statusRank('esimOrder', 'ISSUED'));
  });
});

describe('isNewer (an older status never overwrites a newer one)', () => {
  const card = (status: string | undefined, lastEventAt = 1000): EntityState => ({ kind: 'card', entityId: 'crd_1', eventCount: 1, status, lastEventAt });

  it('anything is newer than nothing', () => {
    expect(isNewer(card(undefined), 'CREATING', 0)).toBe(true);
  });
  it('rank decides before time: a late CREATING does not undo ENABLE, an early-stamped DELETED still wins', () => {
    expect(isNewer(card('ENABLE'), 'CREATING', 5000)).toBe(false);
    expect(isNewer(card('ENABLE'), 'DELETED', 10)).toBe(true);
  });
  it('at equal rank the later event wins, and the same status is no change', () => {
    expect(isNewer(card('ENABLE'), 'DISABLE', 1500)).toBe(true);
    expect(isNewer(card('ENABLE'), 'DISABLE', 500)).toBe(false);
    expect(isNewer(card('ENABLE'), 'DISABLE', 1000)).toBe(true);
    expect(isNewer(card('ENABLE'), 'ENABLE', 2000)).toBe(false);
  });
  it('a terminal payout is not overwritten by a late PROCESSING', () => {
    const payout: EntityState = { kind: 'payout', entityId: 'po-1', eventCount: 2, status: 'COMPLETED', lastEventAt: 100 };
    expect(isNewer(payout, 'PROCESSING', 900)).toBe(false);
  });
});

describe('statusOf (the status an event reports)', () => {
  const event = (eventType: string, data: Record<string, unknown>): ProviderEvent => ({ eventId: 'evt_1', eventType, createdAt: 1, data });

  it.each([
    ['CARD_CREATED', { cardId: 'crd_1', status: 'ENABLE' }, 'ENABLE'],
    ['CARDHOLDER_KYC_STATUS', { id: 'kyc_1', kycStatus: 'REJECTED', status: 'IGNORED' }, 'REJECTED'],
    ['ESIM_ISSUED', { orderNo: 'o', esimNo: 'e', status: 'ISSUED' }, 'ISSUED'],
    ['ESIM_EXPIRING', { esimNo: 'e' }, 'EXPIRING'],
    ['ESIM_EXPIRED', { esimNo: 'e', reason: 'DEPLETED' }, 'DEPLETED'],
    ['ESIM_EXPIRED', { esimNo: 'e' }, 'EXPIRED'],
    ['PAYOUT_FAILED', { merOrderNo: 'po', status: 'FAILED' }, 'FAILED'],
    // The spec does not show a payout webhook's payload: the event's name says the status.
    ['PAYOUT_COMPLETED', { merOrderNo: 'po' }, 'COMPLETED'],
  ])('%s %j → %s', (eventType, data, status) => {
    expect(statusOf(event(eventType, data))).toBe(status);
  });

  it('transactions and usage alerts report none, even with a status field', () => {
    expect(statusOf(event('CARD_TRANSACTION', { cardId: 'crd_1', status: 'DECLINED' }))).toBeUndefined();
    expect(statusOf(event('ESIM_USAGE_ALERT', { esimNo: 'e', status: 'ACTIVE' }))).toBeUndefined();
    expect(statusOf(event('CARD_REISSUED', { cardId: 'crd_1' }))).toBeUndefined();
  });
});
