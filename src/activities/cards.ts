/** Card activities: BINs (cached), issuance, reads, the card's later life, and the sealed sensitive read. */
import type { ProviderClient } from '../provider/client';
import type { BinCache } from '../provider/bin-cache';
import type { CardBinAnswer } from '../provider/answers';
import type { ValueSealer } from '../codec/sealed-value';
import { createCardBody, toCardView } from '../shared/card-rules';
import type { CardView, ContactInput, IssueCardInput, SealedValue } from '../shared/types';
import { logExtraFields, providerCall } from './provider-call';

export type CardChange =
  | { cardId: string; action: 'freeze' | 'unfreeze' | 'delete' }
  | { cardId: string; action: 'pin'; pin: string }
  | { cardId: string; action: 'contact'; contact: ContactInput };

export interface CardActivityDeps {
  provider: ProviderClient;
  bins: BinCache<CardBinAnswer>;
  sealer: ValueSealer;
}

export function createCardActivities({ provider, bins, sealer }: CardActivityDeps) {
  return {
    /** The BIN from the 24 h cache (refreshed at once when asked); null when the project has no such BIN. */
    async getCardBin({ cardBinId, refresh }: { cardBinId: string; refresh?: boolean }): Promise<CardBinAnswer | null> {
      return providerCall(async () => {
        if (refresh) bins.invalidate();
        return (await bins.get(cardBinId)) ?? null;
      });
    },

    async createCard({ input, idempotencyKey }: { input: IssueCardInput; idempotencyKey: string }): Promise<CardView> {
      return providerCall(async () => {
        try {
          return toCardView(await provider.createCard(createCardBody(input), { idempotencyKey }));
        } catch (err) {
          // The BIN list changed under us: refresh it now, so the workflow's next lookup sees the provider's list.
          // A failed refresh leaves the cache empty (the next lookup asks again) and must not hide the StaleCardBin.
          await bins.noteCreateCardFailure(err).catch(() => undefined);
          throw err;
        }
      });
    },

    async getCard({ cardId }: { cardId: string }): Promise<CardView> {
      return providerCall(async () => toCardView(await provider.getCard(cardId)));
    },

    /**
     * The action alone (freeze, unfreeze, PIN, contact, delete). Any 2xx is success whatever its
     * body; the card's state is read afterwards with getCard (card-lifecycle.ts).
     */
    async applyCardChange(change: CardChange): Promise<void> {
      return providerCall(() => applyChange(provider, change));
    },

    /**
     * Kept for card workflows that scheduled it before CARD_STATE_FROM_GET_PATCH: the action,
     * then the card as GET /cards/{cardId} answers it (never the action's own answer).
     */
    async changeCard(change: CardChange): Promise<CardView> {
      return providerCall(async () => {
        await applyChange(provider, change);
        return toCardView(await provider.getCard(change.cardId));
      });
    },

    /** The PAN and CVV leave this activity only sealed for the caller. */
    async revealSensitiveCard({ cardId }: { cardId: string }): Promise<SealedValue> {
      return providerCall(async () => sealer.seal(await provider.getSensitiveCard(cardId)));
    },
  };
}

function applyChange(provider: ProviderClient, change: CardChange): Promise<void> {
  switch (change.action) {
    case 'freeze':
      return provider.freezeCard(change.cardId);
    case 'unfreeze':
      return provider.unfreezeCard(change.cardId);
    case 'delete':
      return provider.deleteCard(change.cardId);
    case 'pin':
      return provider.updatePin(change.cardId, { pin: change.pin });
    case 'contact':
      logExtraFields('updateCardContact', change.contact.extra);
      return provider.updateContact(change.cardId, change.contact);
  }
}
