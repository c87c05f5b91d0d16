/**
 * openItem: one call that may have moved money, from the moment its flow or card update could not
 * learn whether it did until the provider's final word or an operator's settlement (shared/open-items.ts,
 * docs/idempotency.md "Open items"). It asks the provider on a cadence (from `firstAskMs`, doubling to
 * `maxAskIntervalMs`) for as long as it takes, with no look-back window: an answer days later counts.
 * Its result is the record of what moved. While it runs it is what pages (open_item_oldest_age_seconds,
 * OpenItemOpenTooLong) and what `starter open` lists; `starter settle REF` settles it by any reference.
 * It reads only, on reconciliation's budget; it never moves money.
 */
import { allHandlersFinished, condition, log, makeContinueAsNewFunc, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { FailureType } from '../shared/failures';
import { describeErrors, hasErrors } from '../shared/card-rules';
import { attemptSettledSignal, closeOpenItemUpdate, openItemQuery } from '../shared/messages';
import { trustedSignal } from './lib/trusted-signal';
import {
  openItemId, openItemSettlementErrors, providerVerdict, saidOf,
  type AttemptSettlement, type ClosedItem, type OpenItem, type OpenItemSettlement, type OpenItemVerdict,
} from '../shared/open-items';
import { PROVIDER_STATUS } from '../shared/search-attributes';
import { isCardMovement } from '../shared/reconcile-checks';
import { applicationCause, failWith, providerCalls } from './lib/provider';
import { providerSide } from './reconciliation/reconcile-money';
import { declareVersioning } from './lib/versioning';
import { rollOverOptions, targetBuildChanged, wakeOnRollOver } from './lib/roll-over';

const DEFAULT_FIRST_ASK_MS = 5 * 60_000;
const DEFAULT_MAX_ASK_INTERVAL_MS = 6 * 3_600_000;
/** Asks of one run before it continues as new: its history stays small however long the item stays open. */
const ASKS_PER_RUN = 200;
/**
 * How long "no record under the key" must last before it says the call never reached the provider:
 * well beyond any read lag (issue 51, case 2: one 404 closed an item "not moved, by the provider" while
 * the card held the money). Never once the provider showed a record under the key.
 */
export const SILENCE_PROVES_AFTER_MS = 15 * 60_000;

/** A card movement whose item knows its request (card and amount): the record under its key can be confirmed as the flow confirms it. */
function confirmsOwner(item: OpenItem): boolean {
  return item.lookup?.resource === 'operation' && isCardMovement(item.flowKind) && typeof item.cardId === 'string' && Number.isInteger(item.amount);
}

export interface OpenItemRun extends OpenItem {
  /** Carried across continue-as-new: how long to wait before the next ask. */
  nextAskMs?: number;
  /** Carried across continue-as-new: the provider showed a record under the key once, so its later silence is lag. */
  seenRecord?: boolean;
  /** Tests only: asks of one run before it continues as new (default ASKS_PER_RUN). */
  asksPerRun?: number;
}

export async function openItem(item: OpenItemRun): Promise<ClosedItem> {
  const itemId = openItemId(item.owner);
  let lastSaid = item.lastSaid;
  let answeredUnder: string | undefined;
  let closed: ClosedItem | undefined;
  let seenRecord = item.seenRecord === true;
  const close = (verdict: OpenItemVerdict, by: ClosedItem['by'], note?: string): ClosedItem =>
    (closed ??= {
      itemId, item, verdict, by, providerSaid: lastSaid, closedAt: new Date(Date.now()).toISOString(),
      ...(answeredUnder === undefined ? {} : { answeredUnder }), ...(note === undefined ? {} : { note }),
    });
  const said = (word: string) => {
    if (word !== lastSaid) upsertSearchAttributes([{ key: PROVIDER_STATUS, value: word }]);
    lastSaid = word;
  };
  /** The provider's verdict now, its word recorded; undefined while it cannot say. */
  const ask = async (): Promise<OpenItemVerdict | undefined> => {
    if (!item.lookup) return undefined;
    const side = await providerSide(providerCalls('reconcile', { scheduleToCloseTimeout: '2 minutes' }), item.lookup);
    said(saidOf(side));
    answeredUnder = side.ref;
    seenRecord ||= side.known;
    let verdict = providerVerdict(item.lookup, side);
    // A record under the key is ours only as the flow's own rule says (issue 51): the same POST under the key confirms it.
    if (verdict === 'moved' && confirmsOwner(item)) {
      const owner = await providerCalls(item.flowKind === 'fundCard' ? 'funding' : 'withdrawal', { scheduleToCloseTimeout: '2 minutes' }).confirmOperationOwner({
        kind: item.flowKind === 'fundCard' ? 'funding' : 'withdrawal', cardId: item.cardId!, amount: item.amount!, idempotencyKey: side.ref ?? item.lookup.ref,
      });
      if (owner === 'another') verdict = 'not-moved';
    }
    // Silence proves "not moved" only once it outlasted any read lag, and never after a record was seen.
    const silenceTooSoon = !side.known && (seenRecord || Date.now() - item.openedAt < SILENCE_PROVES_AFTER_MS);
    if (verdict === 'not-moved' && silenceTooSoon) return undefined;
    return verdict;
  };

  /**
   * One ask at a time: a settlement arriving while the item's own ask is under way waits for that ask's
   * answer (issue 51: the two answers crossed, and a settlement recorded "not moved" from the lagging one
   * with providerSaid COMPLETED from the other).
   */
  let asking: Promise<OpenItemVerdict | undefined> | undefined;
  const askOnce = (): Promise<OpenItemVerdict | undefined> => {
    if (asking) return asking;
    const current: Promise<OpenItemVerdict | undefined> = ask().finally(() => {
      if (asking === current) asking = undefined;
    });
    asking = current;
    return current;
  };

  // The activity still under way when its owner stopped heard the provider's final word after all.
  setHandler(
    attemptSettledSignal,
    trustedSignal<AttemptSettlement>('attemptSettled', ({ verdict, providerSaid }) => {
      if (closed) return;
      said(providerSaid);
      close(verdict, 'provider');
    }),
  );
  setHandler(openItemQuery, () => ({ itemId, ...item, lastSaid, ...(closed ? { closed } : {}) }));
  setHandler(
    closeOpenItemUpdate,
    async (settlement: OpenItemSettlement) => {
      if (closed) return closed;
      const verdict = await askOnce();
      if (closed) return closed;
      return close(operatorVerdict(itemId, item, lastSaid, verdict, settlement), verdict === undefined ? 'operator' : 'provider', settlement.note);
    },
    { validator: (settlement: OpenItemSettlement) => rejectIfInvalid(settlement) },
  );

  wakeOnRollOver();
  let waitMs = item.nextAskMs ?? item.cadence?.firstAskMs ?? DEFAULT_FIRST_ASK_MS;
  for (let asks = 0; asks < (item.asksPerRun ?? ASKS_PER_RUN); asks++) {
    if (await condition(() => closed !== undefined || targetBuildChanged(), waitMs)) {
      if (closed) return closed;
      break; // onto the new build, its next ask a whole wait from now
    }
    // A read that fails for good (a 403, the provider down for minutes) is asked again at the next turn: the item never ends on it.
    const verdict = await askOnce().catch((err: unknown) => {
      log.warn('an open item could not ask the provider; asking again later', { itemId, failure: applicationCause(err)?.type ?? 'unknown' });
      return undefined;
    });
    if (closed) return closed;
    if (verdict !== undefined) return close(verdict, 'provider');
    waitMs = Math.min(waitMs * 2, item.cadence?.maxAskIntervalMs ?? DEFAULT_MAX_ASK_INTERVAL_MS);
  }
  // An operator's settlement under way finishes before the run continues as new.
  await condition(allHandlersFinished);
  return makeContinueAsNewFunc<typeof openItem>(rollOverOptions())({ ...item, lastSaid, nextAskMs: waitMs, ...(seenRecord ? { seenRecord } : {}) });
}

/**
 * The operator's settlement, held against the provider: where it can be asked and gives a final word,
 * that word settles it and a contradicting `found` is refused; while it still works on it, nothing is
 * settled; where it cannot say (no lookup, or its silence proves nothing), the operator's `found` is
 * required and recorded as given.
 */
function operatorVerdict(itemId: string, item: OpenItem, lastSaid: string, provider: OpenItemVerdict | undefined, { found }: OpenItemSettlement): OpenItemVerdict {
  if (provider !== undefined) {
    if (found !== undefined && found !== provider) {
      failWith(FailureType.ValidationFailed, `${itemId}: found says ${found}, the provider says ${provider} (${lastSaid}); nothing recorded`, [{ errors: { found: `contradicts the provider, which says ${provider}` } }]);
    }
    return provider;
  }
  if (item.lookup && !item.lookup.silenceProvesNothing && lastSaid !== 'NO_RECORD') {
    failWith(FailureType.OutcomeUnknown, `${itemId}: the provider is still working on it (${lastSaid}); it stays open and is asked again`, [{ itemId, lastSaid, mayHaveTakenEffect: true }]);
  }
  if (found === undefined) {
    const why = !item.lookup
      ? 'the spec offers no lookup of what it may have moved'
      : item.lookup.silenceProvesNothing
        ? `the provider keeps no record it can be asked for (${item.lookup.resource} ${item.lookup.ref}: ${lastSaid}), and its silence proves nothing`
        : `the provider shows no record under ${item.lookup.ref} (${lastSaid}), which proves nothing until it has lasted ${SILENCE_PROVES_AFTER_MS / 60_000} minutes and never after a record was seen`;
    failWith(FailureType.ValidationFailed, `${itemId}: ${why}; check at the provider and settle with found = moved or not-moved`, [{ errors: { found: 'is required for this item: one of moved, not-moved' } }]);
  }
  return found;
}

function rejectIfInvalid(settlement: OpenItemSettlement): void {
  const errors = openItemSettlementErrors(settlement);
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid settlement: ${describeErrors(errors)}`, [{ errors }]);
}

// docs/versioning.md: stays open for days or longer, pinned to each run's build; moves to a new build at a continue-as-new (lib/roll-over.ts).
declareVersioning('PINNED', openItem);
