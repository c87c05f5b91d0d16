/**
 * The rules a card request must meet, checked before any provider call: the provider's own
 * schemas (shared with the sandbox) plus the BIN's conditions. Pure: used by the issueCard
 * workflow, the card workflow's update validators and the operator CLI.
 */
import {
  cardBinRequirementErrors,
  createCardRequestSchema,
  fieldErrorsFromZod,
  fundCardRequestSchema,
  idempotencyKeySchema,
  pinSchema,
  updateCardContactRequestSchema,
  withdrawFromCardRequestSchema,
  type BinConditions,
  type CreateCardRequest,
} from '../provider/schemas';
import type { FieldErrors } from './failures';
import type { CardView, ContactInput, IssueCardInput, MoneyMovementKind } from './types';

/** The provider body of an issueCard input (our own options stripped). */
export function createCardBody(input: IssueCardInput): CreateCardRequest {
  const { idempotencyKey: _key, timings: _timings, ...body } = input;
  return body as CreateCardRequest;
}

/** Field errors of an issueCard input; `bin` adds the BIN's conditions when known. */
export function issueCardErrors(input: IssueCardInput, bin?: BinConditions): FieldErrors {
  const errors: FieldErrors = {};
  const parsed = createCardRequestSchema.safeParse(createCardBody(input));
  if (!parsed.success) Object.assign(errors, fieldErrorsFromZod(parsed.error));
  if (input.idempotencyKey !== undefined) Object.assign(errors, keyErrors(input.idempotencyKey));
  if (bin) {
    for (const [field, rule] of Object.entries(cardBinRequirementErrors(bin, input as Partial<CreateCardRequest>))) errors[field] ??= rule;
  }
  return errors;
}

export function moneyMovementErrors(kind: MoneyMovementKind, input: { cardId?: unknown; amount?: unknown; idempotencyKey?: unknown }): FieldErrors {
  const errors: FieldErrors = {};
  if (typeof input.cardId !== 'string' || input.cardId.length === 0) errors.cardId = 'is required';
  const schema = kind === 'funding' ? fundCardRequestSchema : withdrawFromCardRequestSchema;
  const parsed = schema.safeParse({ amount: input.amount });
  if (!parsed.success) Object.assign(errors, fieldErrorsFromZod(parsed.error));
  if (input.idempotencyKey !== undefined) Object.assign(errors, keyErrors(input.idempotencyKey));
  return errors;
}

export function pinErrors(pin: unknown): FieldErrors {
  const parsed = pinSchema.safeParse(pin);
  return parsed.success ? {} : { pin: parsed.error.issues[0].message };
}

export function contactErrors(contact: ContactInput): FieldErrors {
  const parsed = updateCardContactRequestSchema.safeParse(contact);
  return parsed.success ? {} : fieldErrorsFromZod(parsed.error);
}

function keyErrors(key: unknown): FieldErrors {
  const parsed = idempotencyKeySchema.safeParse(key);
  return parsed.success ? {} : { idempotencyKey: parsed.error.issues[0].message };
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

/** The card as our flows report it: masked PAN, no contact or address data. */
export function toCardView(card: Record<string, unknown>): CardView {
  const pick = <K extends keyof CardView>(k: K) => (card[k] === undefined ? {} : { [k]: card[k] });
  return {
    cardId: String(card.cardId),
    cardNumber: String(card.cardNumber ?? ''),
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
