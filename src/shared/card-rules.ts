/**
 * The rules a card request must meet, checked before any provider call: the provider's own
 * request rules (provider-api/cards.ts, shared with the sandbox) plus the BIN's conditions.
 * Pure and free of schema libraries: used by the issueCard workflow, the card workflow's update
 * validators, the operator CLI and the sandbox.
 */
import {
  createCardRequest,
  fundCardRequest,
  pin as pinRule,
  updateCardContactRequest,
  withdrawFromCardRequest,
  type CardBin,
  type CreateCardRequest,
} from '../provider-api/cards';
import { idempotencyKey } from '../provider-api/endpoints';
import { valueErrors } from '../provider-api/rules';
import { sealedPinErrors } from './card-secrets';
import type { FieldErrors } from './failures';
import type { CardView, ContactInput, IssueCardInput, IssueCardRequestInput, MoneyMovementKind } from './types';

/** The BIN's conditions as far as the provider stated them; an absent one is left to the provider. */
export type BinConditions = Partial<Pick<CardBin, 'mobile' | 'email' | 'supportPin' | 'issuingCountry' | 'requireKycCardholder'>>;

/**
 * The rules that depend on the BIN (mobile, email, PIN, US billing address, KYC cardholder).
 * Shared so the client can refuse early what the provider would refuse; returns {} when met.
 */
export function cardBinRequirementErrors(bin: BinConditions, body: Partial<CreateCardRequest>): FieldErrors {
  const errors: FieldErrors = {};
  if (bin.mobile) {
    if (body.mobilePrefix === undefined) errors.mobilePrefix = 'is required for this cardBinId';
    if (body.mobile === undefined) errors.mobile = 'is required for this cardBinId';
  }
  if (bin.email && body.email === undefined) errors.email = 'is required for this cardBinId';
  if (bin.supportPin === false && body.pin !== undefined) errors.pin = 'is not supported by this cardBinId';
  if (bin.issuingCountry === 'US' && body.billingAddress === undefined) errors.billingAddress = 'is required for a US cardBinId';
  if (bin.requireKycCardholder && body.cardholderId === undefined) errors.cardholderId = 'is required for this cardBinId';
  return errors;
}

/** The provider body of an issueCard input (our own options stripped; the PIN as the activity opened it). */
export function createCardBody(input: IssueCardRequestInput): CreateCardRequest {
  const { idempotencyKey: _key, timings: _timings, ...body } = input;
  return body as CreateCardRequest;
}

/** Field errors of an issueCard input; `bin` adds the BIN's conditions when known, `now` the sealed PIN's expiry. */
export function issueCardErrors(input: IssueCardInput, bin?: BinConditions, now?: number): FieldErrors {
  // The PIN is sealed (shared/card-secrets.ts): its digits are checked by the caller before sealing and by the activity after opening.
  const { pin, ...rest } = input;
  const errors = createCardRequest.errors(createCardBody(rest));
  if (pin !== undefined) Object.assign(errors, sealedPinErrors(pin, 'pin', now));
  if (input.idempotencyKey !== undefined) Object.assign(errors, keyErrors(input.idempotencyKey));
  if (bin) {
    for (const [field, rule] of Object.entries(cardBinRequirementErrors(bin, input as Partial<CreateCardRequest>))) errors[field] ??= rule;
  }
  return errors;
}

/** issueCardErrors on the caller's side, the PIN still in clear: its digits, and whether the BIN takes one. */
export function issueCardRequestErrors(request: IssueCardRequestInput, bin?: BinConditions): FieldErrors {
  const { pin, ...rest } = request;
  const errors = issueCardErrors(rest, bin);
  if (pin === undefined) return errors;
  const pinRules = { ...(bin ? cardBinRequirementErrors(bin, { pin }) : {}), ...pinErrors(pin) };
  if (pinRules.pin !== undefined) errors.pin = pinRules.pin;
  return errors;
}

export function moneyMovementErrors(kind: MoneyMovementKind, input: { cardId?: unknown; amount?: unknown; idempotencyKey?: unknown; timings?: unknown }): FieldErrors {
  const errors: FieldErrors = {};
  if (typeof input.cardId !== 'string' || input.cardId.length === 0) errors.cardId = 'is required';
  const request = kind === 'funding' ? fundCardRequest : withdrawFromCardRequest;
  Object.assign(errors, request.errors({ amount: input.amount }));
  if (input.idempotencyKey !== undefined) Object.assign(errors, keyErrors(input.idempotencyKey));
  Object.assign(errors, moneyTimingsErrors(input.timings));
  return errors;
}

/** Why a card's money update must carry its caller's key: the rule its refusal names. */
export const CARD_MONEY_UPDATE_KEY_RULE = "is required: a card's money update is repeated only under its key (a retry with the same key joins the first)";

/**
 * Field errors of a money update of the card's workflow (the `fundCard`/`withdrawFromCard` updates):
 * moneyMovementErrors, and `idempotencyKey` is required (issue 51). A keyless update's key could only
 * come from its update ID, and a raw Temporal client that sets none gets a new one on every call, so
 * its retry would move the money again. The standalone fundCard/withdrawFromCard flows keep taking
 * keyless input (moneyMovementErrors): their key comes from the workflow ID, which a retry repeats.
 */
export function cardMoneyUpdateErrors(kind: MoneyMovementKind, input: { cardId?: unknown; amount?: unknown; idempotencyKey?: unknown; timings?: unknown }): FieldErrors {
  const errors = moneyMovementErrors(kind, input);
  if (input.idempotencyKey === undefined) errors.idempotencyKey = CARD_MONEY_UPDATE_KEY_RULE;
  return errors;
}

/** The largest freshness bound a caller may give: a day (a larger one is no bound at all; leave the read out instead). */
export const MAX_CARD_VIEW_AGE_MS = 86_400_000;

/**
 * The one freshness rule of the card's view, for the client's answer from the query and the card
 * workflow's own check: read within `maxAgeMs` of `now`, and no movement answered since that read.
 */
export function balanceFresh(view: { readAt?: number; movedSince: boolean }, maxAgeMs: number, now: number): boolean {
  return view.readAt !== undefined && !view.movedSince && now - view.readAt <= maxAgeMs;
}

/** Field errors of a freshness request: `maxAgeMs` an integer from 0 to a day. */
export function freshnessErrors(request: unknown): FieldErrors {
  const maxAgeMs = (request as { maxAgeMs?: unknown } | undefined)?.maxAgeMs;
  if (!Number.isInteger(maxAgeMs) || (maxAgeMs as number) < 0 || (maxAgeMs as number) > MAX_CARD_VIEW_AGE_MS) {
    return { maxAgeMs: `must be an integer number of milliseconds from 0 to ${MAX_CARD_VIEW_AGE_MS}` };
  }
  return {};
}

/**
 * A movement's waits are ours to bound, not the caller's: a PROCESSING movement holds the card's
 * queue (freeze, delete) until its deadline, so a deadline of a month jams the card for a month.
 */
export const MAX_MONEY_WAIT_MS = 86_400_000;
const MONEY_WAITS = ['deadlineMs', 'pollInitialIntervalMs', 'pollMaxIntervalMs'] as const;
const TIMINGS_FIELD = 'timings';

/** Field errors of a money movement's `timings` (`timings.deadlineMs`, …): each wait an integer from 1 ms to a day. */
export function moneyTimingsErrors(timings: unknown): FieldErrors {
  return waitTimingsErrors(timings, MAX_MONEY_WAIT_MS);
}

/** A payout may take days to reach its terminal status: its deadline may be a month; every other wait at most a day. */
export const MAX_PAYOUT_DEADLINE_MS = 30 * MAX_MONEY_WAIT_MS;

/** Field errors of a payout's `timings`: the deadline an integer from 1 ms to 30 days, each other wait to a day. */
export function payoutTimingsErrors(timings: unknown): FieldErrors {
  return waitTimingsErrors(timings, MAX_MONEY_WAIT_MS, { webhookWaitMs: MAX_MONEY_WAIT_MS, deadlineMs: MAX_PAYOUT_DEADLINE_MS });
}

function waitTimingsErrors(timings: unknown, maxMs: number, fields: Partial<Record<string, number>> = {}): FieldErrors {
  if (timings === undefined) return {};
  if (typeof timings !== 'object' || timings === null || Array.isArray(timings)) return { [TIMINGS_FIELD]: 'must be an object' };
  const limits: Record<string, number> = { ...Object.fromEntries(MONEY_WAITS.map((f) => [f, maxMs])), ...fields } as Record<string, number>;
  const errors: FieldErrors = {};
  for (const [field, max] of Object.entries(limits)) {
    const value = (timings as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
      errors[`${TIMINGS_FIELD}.${field}`] = `must be an integer from 1 to ${max} (milliseconds; at most ${max === MAX_MONEY_WAIT_MS ? 'a day' : `${max / MAX_MONEY_WAIT_MS} days`})`;
    }
  }
  return errors;
}

/** A card a delete reached: DELETING until the provider has returned its balance to the wallet, then DELETED. */
export function isDeleteUnderWay(status: string | undefined): boolean {
  return status === 'DELETING' || status === 'DELETED';
}

export function pinErrors(pin: unknown): FieldErrors {
  return valueErrors('pin', pinRule, pin);
}

export function contactErrors(contact: ContactInput): FieldErrors {
  return updateCardContactRequest.errors(contact);
}

/** An idempotency key we send: the provider's rule for X-Idempotency-Key. */
export function keyErrors(key: unknown, field = 'idempotencyKey'): FieldErrors {
  return valueErrors(field, idempotencyKey, key);
}

export function hasErrors(errors: FieldErrors): boolean {
  return Object.keys(errors).length > 0;
}

/** "firstName must be …; amount must be …" — for failure messages (rules only, never the values). */
export function describeErrors(errors: FieldErrors): string {
  return Object.entries(errors)
    .map(([field, rule]) => `${field} ${rule}`)
    .join('; ');
}

/** The shortest and longest card numbers (ISO/IEC 7812 as the schemes issue them). */
const PAN_LENGTH = { min: 13, max: 19 };

/**
 * The card number as we show it, first 6 and last 4 at most (PCI DSS's widest mask), whatever the
 * provider sent: its masked PAN passes unchanged, a full one is masked here, and one too short for
 * that mask to hide anything worth hiding is all asterisks. Separators are dropped first.
 */
export function maskCardNumber(value: unknown): string {
  const text = typeof value === 'string' || typeof value === 'number' ? String(value).replace(/[\s-]/g, '') : '';
  if (text.length < PAN_LENGTH.min) return '*'.repeat(text.length);
  const hidden = Math.min(text.length, PAN_LENGTH.max) - 10;
  return `${text.slice(0, 6)}${'*'.repeat(hidden)}${text.slice(-4)}`;
}

/** The card as our flows report it: masked PAN, no contact or address data. */
export function toCardView(card: Record<string, unknown>): CardView {
  const pick = <K extends keyof CardView>(k: K) => (card[k] === undefined ? {} : { [k]: card[k] });
  return {
    cardId: String(card.cardId),
    cardNumber: maskCardNumber(card.cardNumber),
    status: String(card.status),
    availableBalance: Number(card.availableBalance ?? 0),
    cardBinId: String(card.cardBinId ?? ''),
    ...pick('name'),
    ...pick('totalConsumption'),
    ...pick('supportPin'),
    ...pick('brand'),
    ...pick('cardholderName'),
    ...pick('cardholderId'),
    ...pick('createdAt'),
    ...pick('updatedAt'),
  } as CardView;
}
