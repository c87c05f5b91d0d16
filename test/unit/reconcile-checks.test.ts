/** What reconciliation compares (src/shared/reconcile-checks.ts): pure, so tested without I/O. */
import { compareCard, compareClaim, moneyClaimOf, type MoneyClaim } from '../../src/shared/reconcile-checks';
import { deriveIdempotencyKey, legacyIdempotencyKey } from '../../src/shared/ids';
import { parseDuration, readBudget } from '../../src/shared/reconciliation';

const funding = (outcome: Parameters<typeof moneyClaimOf>[2]) => moneyClaimOf('fund-card/1', 'fundCard', outcome);

describe('moneyClaimOf', () => {
  test('a completed movement claims its key and amount; a failure its key from the details; a timeout the key derived from its workflow ID', () => {
    expect(funding({ result: { cardId: 'crd_1', amount: 500, idempotencyKey: 'k1', status: 'COMPLETED' } })).toMatchObject({ resource: 'operation', ref: 'k1', ourPhase: 'succeeded', amount: 500, cardId: 'crd_1' });
    expect(funding({ failure: { type: 'InsufficientFunds', details: [{ status: 422 }, { idempotencyKey: 'k2' }] } })).toMatchObject({ ref: 'k2', ourPhase: 'failed', ourStatus: 'InsufficientFunds' });
    expect(funding({ failure: { type: 'ValidationFailed', details: [{ errors: {} }] } })).toBeUndefined();
    expect(funding({ closed: 'TIMED_OUT' })).toMatchObject({ ref: deriveIdempotencyKey('fund', 'fund-card/1'), ourPhase: 'failed', ourStatus: 'TIMED_OUT' });
  });

  test("a movement that timed out or was terminated under its caller's key claims that key, not one derived from its workflow ID", () => {
    expect(funding({ closed: 'TERMINATED', callerKey: 'order-4711' })).toMatchObject({ resource: 'operation', ref: 'order-4711', ourPhase: 'failed', ourStatus: 'TERMINATED' });
  });

  test('a running movement claims its key and amount, pending; a failure whose details name no key falls back to the caller\'s', () => {
    expect(funding({ running: true, callerKey: 'order-9', amount: 700 })).toMatchObject({ ref: 'order-9', ourPhase: 'pending', ourStatus: 'RUNNING', amount: 700 });
    expect(funding({ failure: { type: 'InsufficientFunds', details: [] }, callerKey: 'order-10' })).toMatchObject({ ref: 'order-10', ourPhase: 'failed' });
    // No key anywhere: the keys the flow derived from its workflow ID, SHA-256 first, then the FNV one an earlier version used.
    expect(funding({ failure: { type: 'InsufficientFunds', details: [] } })).toMatchObject({ ref: deriveIdempotencyKey('fund', 'fund-card/1'), alsoUnder: [legacyIdempotencyKey('fund', 'fund-card/1')] });
    expect(moneyClaimOf('p', 'sendPayout', { running: true })).toBeUndefined();
  });

  test('payouts and eSIM orders claim their own ids and phases; a refunded eSIM is settled, not a claim', () => {
    expect(moneyClaimOf('p', 'sendPayout', { result: { merOrderNo: 'po-1', status: 'SUCCESS', arriveAmount: 100 } })).toMatchObject({ resource: 'payout', ref: 'po-1', ourPhase: 'succeeded', amount: 100 });
    expect(moneyClaimOf('e', 'purchaseEsim', { result: { orderNo: 'eord_1', status: 'ISSUED' } })).toMatchObject({ resource: 'esimOrder', ref: 'eord_1', ourPhase: 'succeeded' });
    expect(moneyClaimOf('e', 'purchaseEsim', { failure: { type: 'EsimRefunded', details: [{ idempotencyKey: 'k' }] } })).toBeUndefined();
    expect(moneyClaimOf('e', 'purchaseEsim', { failure: { type: 'OutcomeUnknown', details: [{ idempotencyKey: 'k' }] } })).toMatchObject({ resource: 'operation', ref: 'k' });
  });

  test('every end of every money flow is a claim (issue 29, case 8): a payout by its merOrderNo, an issueCard by the card it recorded, an eSIM under its derived keys', () => {
    expect(moneyClaimOf('p', 'sendPayout', { failure: { type: 'OutcomeUnknown', details: [] }, merOrderNo: 'po-2' })).toMatchObject({ resource: 'payout', ref: 'po-2', ourPhase: 'failed', ourStatus: 'OutcomeUnknown' });
    expect(moneyClaimOf('p', 'sendPayout', { closed: 'TERMINATED', merOrderNo: 'po-3' })).toMatchObject({ resource: 'payout', ref: 'po-3', ourStatus: 'TERMINATED' });
    expect(moneyClaimOf('i', 'issueCard', { closed: 'TIMED_OUT', cardId: 'crd_9' })).toMatchObject({ resource: 'card', ref: 'crd_9', ourPhase: 'failed' });
    expect(moneyClaimOf('i', 'issueCard', { failure: { type: 'CardProvisioningTimedOut', details: [{ cardId: 'crd_8' }] } })).toMatchObject({ resource: 'card', ref: 'crd_8' });
    expect(moneyClaimOf('i', 'issueCard', { failure: { type: 'OutcomeUnknown', details: [{ idempotencyKey: 'k' }] } })).toBeUndefined();
    expect(moneyClaimOf('i', 'issueCard', { result: { cardId: 'crd_7', status: 'ENABLE' } })).toBeUndefined();
    expect(moneyClaimOf('e', 'rechargeEsim', { closed: 'TERMINATED' })).toMatchObject({ resource: 'operation', ref: deriveIdempotencyKey('esimrc', 'e'), alsoUnder: [legacyIdempotencyKey('esimrc', 'e')] });
    expect(moneyClaimOf('e', 'purchaseEsim', { running: true })).toBeUndefined();
  });

  test('a failure that says this request moved nothing is no claim: refused before any call, or a key that answers another request', () => {
    expect(funding({ failure: { type: 'IdempotencyConflict', details: [{ idempotencyKey: 'k' }] } })).toBeUndefined();
    expect(moneyClaimOf('p', 'sendPayout', { failure: { type: 'ValidationFailed', details: [] }, merOrderNo: 'po-4' })).toBeUndefined();
  });
});

describe('compareClaim', () => {
  const done: MoneyClaim = { workflowId: 'w', flowKind: 'fundCard', resource: 'operation', ref: 'k', ourPhase: 'succeeded', ourStatus: 'COMPLETED', amount: 500 };
  const failed: MoneyClaim = { ...done, ourPhase: 'failed', ourStatus: 'OutcomeUnknown' };
  const running: MoneyClaim = { ...done, ourPhase: 'pending', ourStatus: 'RUNNING' };
  test.each([
    ['done, provider failed', done, { known: true, status: 'FAILED' }, 'done-not-at-provider'],
    ['done, provider does not know the key', done, { known: false }, 'done-not-at-provider'],
    ['failed, provider completed', failed, { known: true, status: 'COMPLETED' }, 'moved-unaccounted'],
    ['done, amounts differ', done, { known: true, status: 'COMPLETED', amount: 600 }, 'amount-differs'],
    ['done and completed', done, { known: true, status: 'COMPLETED', amount: 500 }, undefined],
    ['failed, provider still processing', failed, { known: true, status: 'PROCESSING' }, undefined],
    ['failed, provider does not know the key', failed, { known: false }, undefined],
    ['failed and failed', failed, { known: true, status: 'FAILED' }, undefined],
    ['running, the key held for another amount', running, { known: true, status: 'PROCESSING', amount: 600 }, 'amount-differs'],
    ['running, the key held for its amount', running, { known: true, status: 'COMPLETED', amount: 500 }, undefined],
    ['running, the key not yet known', running, { known: false }, undefined],
  ] as const)('%s', (_name, claim, provider, kind) => {
    expect(compareClaim(claim, provider)?.kind).toBe(kind);
  });
});

describe('compareCard', () => {
  const ours = { cardId: 'crd_1', workflowId: 'card/crd_1', status: 'ENABLE', availableBalance: 1000 };
  const card = { cardId: 'crd_1', cardNumber: '4859****', cardBinId: 'b', status: 'ENABLE', availableBalance: 1000 };
  test('agrees, differs in balance or status, or the provider does not know the card', () => {
    expect(compareCard(ours, { known: true, card })).toEqual([]);
    expect(compareCard(ours, { known: true, card: { ...card, availableBalance: 580, status: 'DISABLE' } }).map((d) => d.kind)).toEqual(['card-status-differs', 'card-balance-differs']);
    expect(compareCard(ours, { known: false })).toEqual([expect.objectContaining({ kind: 'card-unknown-at-provider', ids: { cardId: 'crd_1' } })]);
  });
  test("a view a movement of ours made stale is not drift: its balance is not compared, its status still is", () => {
    const stale = { ...ours, movedSinceBalanceRead: true };
    expect(compareCard(stale, { known: true, card: { ...card, availableBalance: 1500 } })).toEqual([]);
    expect(compareCard(stale, { known: true, card: { ...card, availableBalance: 1500, status: 'DISABLE' } }).map((d) => d.kind)).toEqual(['card-status-differs']);
  });
});

test("readBudget: the share of the smallest window reconciliation reads, whole reads, at least one", () => {
  expect(readBudget(60_000, 0.1, [100, 100])).toEqual({ windowMs: 60_000, readsPerWindow: 10 });
  expect(readBudget(60_000, 0.15, [100, 70])).toEqual({ windowMs: 60_000, readsPerWindow: 10 });
  expect(readBudget(1_000, 0.001, [100])).toEqual({ windowMs: 1_000, readsPerWindow: 1 });
});

test('parseDuration reads the durations the CLI and the schedules use', () => {
  expect([parseDuration('2 hours'), parseDuration('30m'), parseDuration('1d'), parseDuration('45s'), parseDuration('soon'), parseDuration('0h')]).toEqual([7_200_000, 1_800_000, 86_400_000, 45_000, undefined, undefined]);
});
