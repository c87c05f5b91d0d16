/** Card endpoints: BINs, issue, read, sensitive data, funding, withdrawal, freeze, PIN, contact, delete. */
import {
  createCardRequest, fundCardRequest, updateCardContactRequest,
  updateCardPinRequest, withdrawFromCardRequest, type CardBin, type CreateCardRequest,
} from '../../provider-api';
import { cardBinRequirementErrors } from '../../shared/card-rules';
import { idempotent, validate, type ApiCall, type ApiHandlers } from '../api';
import {
  cardView, deleteCard, listedBins, fundCard, getCard, issueCard, readCard, sensitiveView, setFrozen, updateContact, updatePin, withdrawFromCard,
} from '../domain/cards';
import { ok, validationFailed } from '../errors';

const DAY_MS = 86_400_000;

/** The BIN's conditions, checked alongside the schema so one 400 names every field. */
function binErrors(call: ApiCall, raw: Record<string, unknown>) {
  if (raw.cardBinId === undefined) return {};
  const bin = listedBins(call.sandbox).find((b) => b.cardBinId === raw.cardBinId);
  if (!bin) return { cardBinId: 'unknown or stale cardBinId; refresh GET /card-bins' };
  return cardBinRequirementErrors(bin, raw as Partial<CreateCardRequest>);
}

/** Simple state changes answer the Card as it is now (writes are never lagged). */
function cardAction(action: (call: ApiCall, card: ReturnType<typeof getCard>) => void) {
  return (call: ApiCall) => {
    const card = getCard(call.sandbox, call.params.cardId);
    action(call, card);
    return ok(cardView(call.sandbox, card));
  };
}

export const cardRoutes = {
  listCardBins: (call) => ok(listedBins(call.sandbox)),

  createCard: (call) => {
    const { data, key } = validate(call, createCardRequest, (raw) => binErrors(call, raw));
    const bin = listedBins(call.sandbox).find((b) => b.cardBinId === data.cardBinId) as CardBin;
    // Success is kept 24 h; any failure releases the key at once.
    return idempotent(call, key, { failure: 'release', ttlMs: DAY_MS }, () => ok(cardView(call.sandbox, issueCard(call.sandbox, bin, data))));
  },

  // The read side, which may lag behind the writes (config cardReadLagMs).
  getCard: (call) => ok(readCard(call.sandbox, call.params.cardId)),

  getCardSensitive: (call) => ok(sensitiveView(getCard(call.sandbox, call.params.cardId))),

  fundCard: (call) => {
    const { data, key } = validate(call, fundCardRequest);
    const card = getCard(call.sandbox, call.params.cardId);
    return idempotent(
      call, key, { failure: 'terminal', operationType: 'FUNDING' },
      (handle) => {
        handle?.describe({ cardId: card.cardId, amount: data.amount });
        fundCard(call.sandbox, card, data.amount, key);
        return ok({ success: true, message: 'funded', ...(handle ? { operationId: handle.operationId } : {}) });
      },
      card.cardId,
    );
  },

  withdrawFromCard: (call) => {
    const { data, key } = validate(call, withdrawFromCardRequest);
    const card = getCard(call.sandbox, call.params.cardId);
    return idempotent(
      call, key, { failure: 'terminal', operationType: 'WITHDRAWAL' },
      (handle) => {
        handle?.describe({ cardId: card.cardId, amount: data.amount });
        withdrawFromCard(call.sandbox, card, data.amount, key);
        return ok({ success: true, message: 'withdrawn', ...(handle ? { operationId: handle.operationId } : {}) });
      },
      card.cardId,
    );
  },

  freezeCard: cardAction((call, card) => setFrozen(call.sandbox, card, true)),
  unfreezeCard: cardAction((call, card) => setFrozen(call.sandbox, card, false)),

  updateCardPin: (call) => {
    const { data } = validate(call, updateCardPinRequest);
    const card = getCard(call.sandbox, call.params.cardId);
    if (!card.bin.supportPin) throw validationFailed({ pin: "is not supported by this card's BIN" });
    updatePin(call.sandbox, card, data.pin);
    return ok(cardView(call.sandbox, card));
  },

  updateCardContact: (call) => {
    const { data } = validate(call, updateCardContactRequest);
    const card = getCard(call.sandbox, call.params.cardId);
    updateContact(call.sandbox, card, data);
    return ok(cardView(call.sandbox, card));
  },

  deleteCard: cardAction((call, card) => deleteCard(call.sandbox, card)),
} satisfies Partial<ApiHandlers>;
