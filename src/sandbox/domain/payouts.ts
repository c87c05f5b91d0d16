/**
 * Payouts: PENDING (wallet debited settleAmount) → PROCESSING → COMPLETED, each step after
 * payoutProcessingMs; FAILED or CANCELLED return the money. A payee account number starting
 * FAIL fails at processing; an underfunded wallet gives an order that is FAILED from the start
 * (the order exists, so an idempotent retry returns it). Every change after creation emits
 * PAYOUT_<STATUS>.
 */
import type { CreatePayoutRequest, Payout, PayoutStatus } from '../../provider-api';
import { ApiError, notFound } from '../errors';
import { PAYOUT_QUOTE_RATES } from '../fixtures';
import { EXTERNAL, InsufficientBalance, WALLET } from '../ledger';
import type { Sandbox } from '../sandbox';
import type { PayoutRecord } from '../state';

const TERMINAL: readonly PayoutStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED'];
const NEXT: Record<PayoutStatus, readonly PayoutStatus[]> = {
  PENDING: ['PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'],
  PROCESSING: ['COMPLETED', 'FAILED'],
  COMPLETED: [],
  FAILED: [],
  CANCELLED: [],
};

/** `lagging`: the provider's read side, which may not see a payout younger than `readLagMs` yet. */
export function getPayout(sb: Sandbox, merOrderNo: string, { lagging = false } = {}): PayoutRecord {
  const p = sb.state.payouts.get(merOrderNo);
  if (!p || (lagging && sb.now() - p.createdAt < sb.config.readLagMs)) throw notFound('payout');
  return p;
}

export function payoutView(p: PayoutRecord): Payout {
  const { idempotencyKey: _key, timer: _timer, ...view } = p;
  return { ...view, canCancel: p.status === 'PENDING' };
}

export function createPayout(sb: Sandbox, body: CreatePayoutRequest, key: string, operationId: string): PayoutRecord {
  const quoteRate = PAYOUT_QUOTE_RATES[body.arriveCurrency];
  const now = sb.now();
  const payout: PayoutRecord = {
    merOrderNo: body.merOrderNo,
    status: 'PENDING',
    paymentType: body.paymentType,
    arriveCurrency: body.arriveCurrency,
    arriveAmount: body.arriveAmount,
    quoteRate,
    settleAmount: Math.ceil(body.arriveAmount / quoteRate),
    payeeFirstName: body.payeeFirstName,
    payeeLastName: body.payeeLastName,
    payeeAccountNo: body.payeeAccountNo,
    remark: body.remark ?? '',
    operationId,
    createdAt: now,
    completedAt: null,
    canCancel: true,
    idempotencyKey: key,
  };
  sb.state.payouts.set(payout.merOrderNo, payout);
  try {
    sb.ledger.transfer({ kind: 'PAYOUT', from: WALLET, to: EXTERNAL, amount: payout.settleAmount, ref: payout.merOrderNo, idempotencyKey: key });
  } catch (err) {
    if (!(err instanceof InsufficientBalance)) throw err;
    move(sb, payout, 'FAILED', `INSUFFICIENT_FUNDS: short by ${err.shortBy} cents`, false);
    return payout;
  }
  schedule(sb, payout);
  return payout;
}

function schedule(sb: Sandbox, payout: PayoutRecord): void {
  const next: PayoutStatus = payout.status === 'PENDING' ? 'PROCESSING' : payout.payeeAccountNo.toUpperCase().startsWith('FAIL') ? 'FAILED' : 'COMPLETED';
  payout.timer = sb.timers.after(sb.config.payoutProcessingMs, () => {
    move(sb, payout, next, next === 'FAILED' ? 'PAYEE_ACCOUNT_REJECTED' : undefined);
    if (!TERMINAL.includes(payout.status)) schedule(sb, payout);
  });
}

/** Control API: moves a payout now, if the transition is allowed. */
export function setPayoutStatus(sb: Sandbox, merOrderNo: string, status: PayoutStatus): PayoutRecord {
  const payout = getPayout(sb, merOrderNo);
  if (!NEXT[payout.status].includes(status)) throw new ApiError('INVALID_STATE', `payout is ${payout.status}; cannot move to ${status}`);
  sb.timers.cancel(payout.timer);
  move(sb, payout, status, status === 'FAILED' ? 'FAILED_BY_OPERATOR' : undefined);
  if (!TERMINAL.includes(payout.status)) schedule(sb, payout);
  return payout;
}

/** Applies a status; FAILED/CANCELLED after the debit return the money. Emits PAYOUT_<STATUS>. */
function move(sb: Sandbox, payout: PayoutRecord, status: PayoutStatus, reason?: string, debited = true): void {
  payout.status = status;
  if (reason) payout.failureReason = reason;
  if ((status === 'FAILED' || status === 'CANCELLED') && debited) {
    sb.ledger.transfer({ kind: 'PAYOUT_REVERSAL', from: EXTERNAL, to: WALLET, amount: payout.settleAmount, ref: payout.merOrderNo });
  }
  if (TERMINAL.includes(status)) {
    payout.completedAt = sb.now();
    sb.idempotency.settle(payout.idempotencyKey, status === 'COMPLETED' ? 'COMPLETED' : 'FAILED', status === 'COMPLETED' ? undefined : (reason ?? status));
  }
  payout.canCancel = status === 'PENDING';
  const view = payoutView(payout);
  if (status === 'PROCESSING') sb.webhooks.emit('PAYOUT_PROCESSING', view);
  else if (status === 'COMPLETED') sb.webhooks.emit('PAYOUT_COMPLETED', view);
  else if (status === 'FAILED') sb.webhooks.emit('PAYOUT_FAILED', view);
  else if (status === 'CANCELLED') sb.webhooks.emit('PAYOUT_CANCELLED', view);
}
