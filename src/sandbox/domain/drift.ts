/**
 * What the provider may do without telling us (control API, to seed the differences that
 * reconciliation must find, issue 22): forget a card, complete an operation it had failed,
 * move a payout's status with no webhook, add or withdraw a BIN. Money still moves only
 * through the ledger, so the sandbox's books stay conserved.
 */
import type { CardBin, PayoutStatus } from '../../provider-api';
import { ApiError, notFound } from '../errors';
import { EXTERNAL, WALLET, cardAccount } from '../ledger';
import type { Sandbox } from '../sandbox';
import { getCard } from './cards';
import { getPayout } from './payouts';

/** The card vanishes from the provider's records (GET /cards/{cardId} answers 404); its money stays in its account. */
export function forgetCard(sb: Sandbox, cardId: string): void {
  const card = getCard(sb, cardId);
  sb.timers.cancel(card.timer);
  sb.state.cards.delete(cardId);
}

/** A FAILED funding or withdrawal completes after all: its money moves now, under its key, and GET /operations says COMPLETED. */
export function completeFailedOperation(sb: Sandbox, idempotencyKey: string) {
  const op = sb.idempotency.operation(idempotencyKey);
  if (!op) throw notFound('operation');
  if (op.status !== 'FAILED' || (op.type !== 'FUNDING' && op.type !== 'WITHDRAWAL') || !op.cardId || op.amount === undefined) {
    throw new ApiError('INVALID_STATE', `operation is ${op.status} ${op.type}; only a FAILED funding or withdrawal can be completed`);
  }
  const [from, to] = op.type === 'FUNDING' ? [WALLET, cardAccount(op.cardId)] : [cardAccount(op.cardId), WALLET];
  sb.ledger.transfer({ kind: op.type, from, to, amount: op.amount, ref: op.cardId, idempotencyKey });
  sb.idempotency.complete(idempotencyKey);
  return sb.idempotency.operation(idempotencyKey)!;
}

/** The payout's status changes with no webhook and whatever it was (a bank's late return); a FAILED or CANCELLED after the debit returns the money. */
export function rewritePayoutStatus(sb: Sandbox, merOrderNo: string, status: PayoutStatus) {
  const payout = getPayout(sb, merOrderNo);
  sb.timers.cancel(payout.timer);
  const returned = (s: PayoutStatus) => s === 'FAILED' || s === 'CANCELLED';
  if (returned(status) && !returned(payout.status)) sb.ledger.transfer({ kind: 'PAYOUT_REVERSAL', from: EXTERNAL, to: WALLET, amount: payout.settleAmount, ref: merOrderNo });
  if (!returned(status) && returned(payout.status)) sb.ledger.transfer({ kind: 'PAYOUT', from: WALLET, to: EXTERNAL, amount: payout.settleAmount, ref: merOrderNo });
  payout.status = status;
  payout.canCancel = status === 'PENDING';
  return payout;
}

export function addBin(sb: Sandbox, bin: CardBin): CardBin {
  sb.state.removedBinIds.delete(bin.cardBinId);
  const at = sb.state.addedBins.findIndex((b) => b.cardBinId === bin.cardBinId);
  if (at >= 0) sb.state.addedBins.splice(at, 1);
  sb.state.addedBins.push({ ...bin });
  return bin;
}

export function removeBin(sb: Sandbox, cardBinId: string): void {
  const at = sb.state.addedBins.findIndex((b) => b.cardBinId === cardBinId);
  if (at >= 0) sb.state.addedBins.splice(at, 1);
  else sb.state.removedBinIds.add(cardBinId);
}
