/** Event routing (src/bridge/routing.ts): which entity workflow each webhook goes to. Pure. */
import { entityFor } from '../../src/bridge/routing';
import { entityWorkflowId } from '../../src/shared/ids';
import type { ProviderEvent } from '../../src/shared/types';

const event = (eventType: string, data: Record<string, unknown>): ProviderEvent => ({ eventId: 'evt_1', eventType, createdAt: 1, data });

describe('entityFor', () => {
  // CONTRACTS §4: every event type and the field that names its entity.
  it.each([
    ['CARD_CREATED', { cardId: 'crd_1', status: 'ENABLE' }, 'card', 'crd_1'],
    ['CARD_TRANSACTION', { cardId: 'crd_2', amount: 500 }, 'card', 'crd_2'],
    ['CARDHOLDER_KYC_STATUS', { id: 'kyc_1', kycStatus: 'APPROVED' }, 'kyc', 'kyc_1'],
    // eSIM order events carry esimNo too: they go to the order, which its purchase flow waits on.
    ['ESIM_ISSUED', { orderNo: 'ord_1', esimNo: 'esim_1', status: 'ISSUED' }, 'esimOrder', 'ord_1'],
    ['ESIM_REFUNDED', { orderNo: 'ord_2', esimNo: 'esim_2', status: 'REFUNDED' }, 'esimOrder', 'ord_2'],
    ['ESIM_RECHARGED', { orderNo: 'ord_3', esimNo: 'esim_3', status: 'ISSUED' }, 'esimOrder', 'ord_3'],
    // Usage and expiry events carry orderNo too: they go to the eSIM itself.
    ['ESIM_USAGE_ALERT', { orderNo: 'ord_4', esimNo: 'esim_4' }, 'esim', 'esim_4'],
    ['ESIM_EXPIRING', { orderNo: 'ord_5', esimNo: 'esim_5' }, 'esim', 'esim_5'],
    ['ESIM_EXPIRED', { orderNo: 'ord_6', esimNo: 'esim_6' }, 'esim', 'esim_6'],
    ['PAYOUT_COMPLETED', { merOrderNo: 'po-1', status: 'COMPLETED' }, 'payout', 'po-1'],
    // PAYOUT_<STATUS>: the exact names are not shown, so any PAYOUT_ prefix routes.
    ['PAYOUT_ON_HOLD', { merOrderNo: 'po-2' }, 'payout', 'po-2'],
  ])('%s → %s %s', (eventType, data, kind, entityId) => {
    expect(entityFor(event(eventType, data))).toEqual({ kind, entityId });
  });

  it('the entity\'s workflow ID is readable in the UI', () => {
    const { kind, entityId } = entityFor(event('CARDHOLDER_KYC_STATUS', { id: 'kyc_9', kycStatus: 'PENDING' }));
    expect(entityWorkflowId(kind, entityId)).toBe('kyc-cardholder/kyc_9');
  });

  it('an unknown type is kept, one workflow per type, never dropped', () => {
    expect(entityFor(event('CARD_REISSUED', { cardId: 'crd_1' }))).toEqual({ kind: 'unrouted', entityId: 'CARD_REISSUED' });
  });

  it('a known type without a usable id is kept with the unrouted events', () => {
    expect(entityFor(event('CARD_CREATED', {}))).toEqual({ kind: 'unrouted', entityId: 'CARD_CREATED' });
    expect(entityFor(event('CARDHOLDER_KYC_STATUS', { id: 5 }))).toEqual({ kind: 'unrouted', entityId: 'CARDHOLDER_KYC_STATUS' });
    expect(entityFor(event('PAYOUT_FAILED', { merOrderNo: '' }))).toEqual({ kind: 'unrouted', entityId: 'PAYOUT_FAILED' });
    // The id must sit in the field the type names: a cardId does not route a KYC event.
    expect(entityFor(event('CARDHOLDER_KYC_STATUS', { cardId: 'crd_1' })).kind).toBe('unrouted');
  });

  it('an unrouted type becomes a safe, bounded workflow ID', () => {
    expect(entityFor(event('card reissued/v2?', {})).entityId).toBe('card_reissued_v2_');
    expect(entityFor(event('X'.repeat(100), {})).entityId).toBe('X'.repeat(64));
    expect(entityFor(event('', {})).entityId).toBe('UNKNOWN');
  });
});
