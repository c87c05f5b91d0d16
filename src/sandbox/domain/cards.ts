/**
 * Card state machine: CREATING → ENABLE | FAILED (after cardProvisioningMs, or a control
 * call); ENABLE ⇄ DISABLE (freeze/unfreeze); → DELETING → DELETED (record kept, balance back
 * to the wallet); ENABLE/DISABLE → EXPIRED. Money moves only through the ledger.
 */
import type { Card, CardBin, CardSensitive, CreateCardRequest } from '../../provider-api';
import { MAX_READ_LAG_MS } from '../config';
import { ApiError, notFound } from '../errors';
import { generatePan, maskPan, newId, randomDigits } from '../ids';
import { CARD_BINS } from '../fixtures';
import { InsufficientBalance, WALLET, EXTERNAL, cardAccount } from '../ledger';
import type { Sandbox } from '../sandbox';
import type { CardRecord, CardSnapshot } from '../state';
import { activeCardCount } from './kyc';

/**
 * The BINs GET /card-bins lists now: the fixtures and those added (control API), less those
 * removed (control API) or retired (config `retiredBins`).
 */
export function listedBins(sb: Sandbox): CardBin[] {
  const gone = (b: CardBin) => sb.state.removedBinIds.has(b.cardBinId) || sb.config.retiredBins.includes(b.cardBinId);
  return [...CARD_BINS, ...sb.state.addedBins].filter((b) => !gone(b)).map((b) => ({ ...b }));
}

export function getCard(sb: Sandbox, cardId: string): CardRecord {
  const card = sb.state.cards.get(cardId);
  if (!card) throw notFound('card');
  return card;
}

/** How many changes of a card its history keeps (readCard); older ones are dropped first. */
export const CARD_HISTORY_MAX = 50;

/**
 * GET /cards/{cardId}: the card as the provider's read side sees it, `cardReadLagMs` behind its writes
 * (a lagging read replica). A card created less than the lag ago is not there yet (404); otherwise the
 * newest state recorded at or before now − lag, so sequential reads never go back in time. Without a
 * lag, the card as it is now (no history is looked at).
 */
export function readCard(sb: Sandbox, cardId: string): Card {
  const card = getCard(sb, cardId);
  const lag = sb.config.cardReadLagMs;
  if (lag === 0) return cardView(sb, card);
  const now = sb.now();
  const cutoff = now - lag;
  if (card.createdAt > cutoff) throw notFound('card');
  noticeUnrecorded(sb, card, now);
  const { history } = card;
  if (history.length === 0) return cardView(sb, card);
  let seen = history[0];
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i].at <= cutoff) {
      seen = history[i];
      break;
    }
  }
  // The oldest kept (seen when every change since the cutoff was dropped) is newer than the cutoff: still never older than an earlier answer.
  return copyView(seen.view);
}

/**
 * A change that moved the card's money without going through this module (the control API completing
 * a failed funding, domain/drift.ts) left no record: it is recorded when a lagged read first notices it.
 */
function noticeUnrecorded(sb: Sandbox, card: CardRecord, now: number): void {
  const last = card.history[card.history.length - 1];
  if (last && JSON.stringify(last.view) !== JSON.stringify(cardView(sb, card))) remember(sb, card, now);
}

/** Records the card as it is now in its history, and drops what no read can ask for any more. */
function remember(sb: Sandbox, card: CardRecord, now = sb.now()): void {
  const history: CardSnapshot[] = card.history;
  history.push({ at: now, view: Object.freeze(cardView(sb, card)) });
  if (history.length > CARD_HISTORY_MAX) history.splice(0, history.length - CARD_HISTORY_MAX);
  // A state is still needed while it is the newest at or before now − the longest lag, so the one before the first recent one stays.
  let drop = 0;
  while (drop + 1 < history.length && history[drop + 1].at <= now - MAX_READ_LAG_MS) drop++;
  if (drop > 0) history.splice(0, drop);
}

function copyView(v: Readonly<Card>): Card {
  const copy: Card = { ...v, tags: [...v.tags] };
  if (v.billingAddress) copy.billingAddress = { ...v.billingAddress };
  return copy;
}

export function cardView(sb: Sandbox, c: CardRecord): Card {
  const view: Card = {
    cardId: c.cardId,
    name: `${c.firstName} ${c.lastName}`,
    cardNumber: maskPan(c.pan),
    status: c.status,
    availableBalance: sb.ledger.balance(cardAccount(c.cardId)),
    totalConsumption: c.totalConsumption,
    cardBinId: c.bin.cardBinId,
    supportPin: c.bin.supportPin,
    brand: c.bin.brand,
    currency: c.bin.currency,
    cardholderName: `${c.firstName} ${c.lastName}`,
    tags: [...c.tags],
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
  if (c.cardholderId) view.cardholderId = c.cardholderId;
  if (c.mobilePrefix) view.mobilePrefix = c.mobilePrefix;
  if (c.mobile) view.mobile = c.mobile;
  if (c.email) view.email = c.email;
  if (c.billingAddress) view.billingAddress = { ...c.billingAddress };
  return view;
}

export function sensitiveView(c: CardRecord): CardSensitive {
  return { cardId: c.cardId, cardNumber: c.pan, cvv: c.cvv, expiryMonth: c.expiryMonth, expiryYear: c.expiryYear };
}

/** Accepts a valid request: charges initialAmount from the wallet and starts provisioning. */
export function issueCard(sb: Sandbox, bin: CardBin, body: CreateCardRequest): CardRecord {
  let firstName = body.firstName ?? '';
  let lastName = body.lastName ?? '';
  if (body.cardholderId !== undefined) {
    const holder = sb.state.cardholders.get(body.cardholderId);
    if (!holder) throw new ApiError('VALIDATION_FAILED', undefined, { cardholderId: 'no such cardholder' });
    if (holder.kycStatus !== 'APPROVED') throw new ApiError('CARDHOLDER_NOT_APPROVED', `cardholder is ${holder.kycStatus}`);
    if (activeCardCount(sb, holder.id) >= sb.config.maxCardCount) {
      throw new ApiError('CARD_LIMIT_REACHED', `a cardholder may back at most ${sb.config.maxCardCount} cards`);
    }
    // The verified identity is the name on the card.
    firstName = holder.firstName;
    lastName = holder.lastName;
  }
  const now = sb.now();
  const expiry = new Date(now);
  const card: CardRecord = {
    cardId: newId('crd'),
    bin,
    firstName,
    lastName,
    status: 'CREATING',
    pan: generatePan(bin.bin),
    cvv: randomDigits(3),
    expiryMonth: expiry.getUTCMonth() + 1,
    expiryYear: expiry.getUTCFullYear() + 3,
    pin: body.pin,
    cardholderId: body.cardholderId,
    mobilePrefix: body.mobilePrefix,
    mobile: body.mobile,
    email: body.email,
    billingAddress: body.billingAddress,
    tags: body.tags ?? [],
    totalConsumption: 0,
    failProvisioning: firstName.trim().toUpperCase() === 'FAIL',
    createdAt: now,
    updatedAt: now,
    history: [],
  };
  try {
    sb.ledger.transfer({ kind: 'CARD_ISSUE', from: WALLET, to: cardAccount(card.cardId), amount: body.initialAmount, ref: card.cardId });
  } catch (err) {
    if (err instanceof InsufficientBalance) throw new ApiError('INSUFFICIENT_FUNDS', `wallet balance is below initialAmount, short by ${err.shortBy} cents`);
    throw err;
  }
  sb.state.cards.set(card.cardId, card);
  remember(sb, card, now);
  // With 0 ms this runs right after the current turn, so CARD_CREATED may beat the answer.
  card.timer = sb.timers.after(sb.config.cardProvisioningMs, () => finishProvisioning(sb, card.cardId, card.failProvisioning ? 'FAILED' : 'ENABLE'));
  return card;
}

/** Ends provisioning; false when the card was not CREATING. A failure returns the money and sends no webhook. */
export function finishProvisioning(sb: Sandbox, cardId: string, outcome: 'ENABLE' | 'FAILED'): boolean {
  const card = sb.state.cards.get(cardId);
  if (!card || card.status !== 'CREATING') return false;
  sb.timers.cancel(card.timer);
  // The money back first, so the state recorded as FAILED (touch) holds no balance.
  if (outcome === 'FAILED') returnBalance(sb, card, 'CARD_ISSUE_REVERSAL');
  touch(sb, card, outcome);
  if (outcome === 'FAILED') return true;
  sb.webhooks.emit('CARD_CREATED', cardView(sb, card));
  return true;
}

export function fundCard(sb: Sandbox, card: CardRecord, amount: number, key?: string): void {
  if (card.status !== 'ENABLE') throw new ApiError('INVALID_STATE', `card is ${card.status}; funding needs ENABLE`);
  try {
    sb.ledger.transfer({ kind: 'FUNDING', from: WALLET, to: cardAccount(card.cardId), amount, ref: card.cardId, idempotencyKey: key });
  } catch (err) {
    if (err instanceof InsufficientBalance) throw new ApiError('INSUFFICIENT_FUNDS', `wallet balance is below amount, short by ${err.shortBy} cents`);
    throw err;
  }
  touch(sb, card);
}

/** Frozen and expired cards may still be emptied back into the wallet. */
export function withdrawFromCard(sb: Sandbox, card: CardRecord, amount: number, key?: string): void {
  if (!['ENABLE', 'DISABLE', 'EXPIRED'].includes(card.status)) throw new ApiError('INVALID_STATE', `card is ${card.status}`);
  const balance = sb.ledger.balance(cardAccount(card.cardId));
  if (amount > balance) throw new ApiError('INSUFFICIENT_FUNDS', `amount exceeds the card's available balance of ${balance}`);
  sb.ledger.transfer({ kind: 'WITHDRAWAL', from: cardAccount(card.cardId), to: WALLET, amount, ref: card.cardId, idempotencyKey: key });
  touch(sb, card);
}

/** Freeze and unfreeze are no-ops when already in the target state, so retries are safe. */
export function setFrozen(sb: Sandbox, card: CardRecord, frozen: boolean): void {
  const target = frozen ? 'DISABLE' : 'ENABLE';
  if (card.status === target) return;
  const from = frozen ? 'ENABLE' : 'DISABLE';
  if (card.status !== from) throw new ApiError('INVALID_STATE', `card is ${card.status}; ${frozen ? 'freeze' : 'unfreeze'} needs ${from}`);
  touch(sb, card, target);
}

export function requireUsable(card: CardRecord, action: string): void {
  if (card.status !== 'ENABLE' && card.status !== 'DISABLE') throw new ApiError('INVALID_STATE', `card is ${card.status}; cannot ${action}`);
}

export function updatePin(sb: Sandbox, card: CardRecord, pin: string): void {
  requireUsable(card, 'update the PIN');
  card.pin = pin;
  touch(sb, card);
}

export function updateContact(sb: Sandbox, card: CardRecord, patch: { mobilePrefix?: string; mobile?: string; email?: string }): void {
  requireUsable(card, 'update the contact');
  if (patch.mobilePrefix !== undefined) card.mobilePrefix = patch.mobilePrefix;
  if (patch.mobile !== undefined) card.mobile = patch.mobile;
  if (patch.email !== undefined) card.email = patch.email;
  touch(sb, card);
}

/** DELETING now, DELETED after cardProvisioningMs with the balance returned; repeated deletes are no-ops. */
export function deleteCard(sb: Sandbox, card: CardRecord): void {
  if (card.status === 'DELETING' || card.status === 'DELETED') return;
  if (card.status === 'CREATING') throw new ApiError('INVALID_STATE', 'card is CREATING; wait until it is provisioned');
  touch(sb, card, 'DELETING');
  card.timer = sb.timers.after(sb.config.cardProvisioningMs, () => {
    returnBalance(sb, card, 'CARD_CLOSURE');
    touch(sb, card, 'DELETED');
  });
}

export function expireCard(sb: Sandbox, card: CardRecord): void {
  if (card.status !== 'ENABLE' && card.status !== 'DISABLE') throw new ApiError('INVALID_STATE', `card is ${card.status}`);
  touch(sb, card, 'EXPIRED');
}

/**
 * A simulated spend: approved when the card is ENABLE and covers it, declined otherwise.
 * `announce: false` keeps its CARD_TRANSACTION webhook back (a lost webhook, for reconciliation).
 */
export function simulateTransaction(sb: Sandbox, card: CardRecord, amount: number, merchantName: string, announce = true) {
  const balance = sb.ledger.balance(cardAccount(card.cardId));
  const declineReason = card.status !== 'ENABLE' ? `CARD_${card.status}` : amount > balance ? 'INSUFFICIENT_BALANCE' : undefined;
  const transactionId = newId('txn');
  if (!declineReason) {
    sb.ledger.transfer({ kind: 'CARD_SPEND', from: cardAccount(card.cardId), to: EXTERNAL, amount, ref: transactionId });
    card.totalConsumption += amount;
    touch(sb, card);
  }
  const data = {
    transactionId,
    cardId: card.cardId,
    amount,
    currency: card.bin.currency,
    merchantName,
    status: declineReason ? ('DECLINED' as const) : ('APPROVED' as const),
    ...(declineReason ? { declineReason } : {}),
    createdAt: sb.now(),
  };
  if (announce) sb.webhooks.emit('CARD_TRANSACTION', data);
  return data;
}

function returnBalance(sb: Sandbox, card: CardRecord, kind: 'CARD_ISSUE_REVERSAL' | 'CARD_CLOSURE'): void {
  const balance = sb.ledger.balance(cardAccount(card.cardId));
  if (balance > 0) sb.ledger.transfer({ kind, from: cardAccount(card.cardId), to: WALLET, amount: balance, ref: card.cardId });
}

/** Every change of a card ends here, once its money has moved: the new state is stamped and recorded (readCard). */
function touch(sb: Sandbox, card: CardRecord, status?: CardRecord['status']): void {
  if (status) card.status = status;
  card.updatedAt = sb.now();
  remember(sb, card, card.updatedAt);
}
