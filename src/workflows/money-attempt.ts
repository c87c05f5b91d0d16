/**
 * moneyAttempt: a call that may move money, recorded before its first POST (shared/open-items.ts,
 * docs/idempotency.md "Attempts and open items"). It is not an open item yet: it neither pages nor
 * asks the provider. It ends one of three ways:
 * - the activity that heard the provider's final word tells it (the common case, within the call);
 * - its owner's flow or reconciliation opens it as the item (the flow ended unsure);
 * - its watch finds its owner stopped without a word (terminated, cancelled, timed out, a card workflow
 *   stopped mid-update): it becomes the open item at once, under the same ID.
 * An owner that recorded its outcome itself (a flow completed, a refusal that moved nothing) closes it.
 */
import { condition, makeContinueAsNewFunc, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { attemptLearnedSignal, attemptOpenedSignal, attemptSettledSignal } from '../shared/messages';
import { ATTEMPT_MAX_WATCH_MS, OPEN_ITEM_WORKFLOW_TYPE, attemptItem, type AttemptFacts, openItemId, openItemMemo, type AttemptRecord, type AttemptSettlement, type MoneyAttempt, type OpenItem } from '../shared/open-items';
import { CARD_ID, FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import type { openItem } from './open-item';
import { trustedSignal } from './lib/trusted-signal';
import { declareVersioning } from './lib/versioning';
import { wakeOnRollOver } from './lib/roll-over';

const { attemptOwnerState } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // Temporal being slow is no reason to lose the attempt: asked again until it answers.
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function moneyAttempt(attempt: MoneyAttempt): Promise<AttemptRecord> {
  let { item } = attempt;
  const { watchMs } = attempt;
  const itemId = openItemId(item.owner);
  let settled: AttemptSettlement | undefined;
  let opened: OpenItem | undefined;
  setHandler(attemptSettledSignal, trustedSignal<AttemptSettlement>('attemptSettled', ({ verdict, providerSaid }) => void (settled ??= { verdict, providerSaid })));
  // The call learned what the provider knows it by (the card it created): the item it may become asks about that.
  setHandler(
    attemptLearnedSignal,
    trustedSignal<AttemptFacts>('attemptLearned', ({ cardId, orderNo }) => {
      item = attemptItem(item, { idempotencyKey: item.idempotencyKey, amount: item.amount, cardId: cardId ?? item.cardId, orderNo, ...(item.lookup?.resource === 'payout' ? { merOrderNo: item.lookup.ref } : {}) });
    }),
  );
  setHandler(attemptOpenedSignal, trustedSignal<OpenItem>('attemptOpened', (asOpened) => void (opened ??= withoutAddress(asOpened))));
  // Pinned, it moves only at its one continue-as-new (becoming its item, on the current build): a promotion's ask just wakes it.
  wakeOnRollOver();

  // Started after a delay of one watch (temporal/attempts.ts): what arrived meanwhile is handled first.
  let wait = watchMs;
  while (settled === undefined && opened === undefined) {
    const owner = await attemptOwnerState({ owner: item.owner });
    if (settled !== undefined || opened !== undefined) break;
    if ('recorded' in owner) return { itemId, ...refsOf(item), settledBy: 'flow', verdict: owner.recorded, ownerStatus: owner.status };
    if ('stopped' in owner) opened = { ...item, reason: stoppedReason(owner.stopped), openedAt: Date.now() };
    else if (await condition(() => settled !== undefined || opened !== undefined, wait)) break;
    wait = Math.min(wait * 2, ATTEMPT_MAX_WATCH_MS);
  }
  if (settled !== undefined) return { itemId, ...refsOf(item), settledBy: 'provider', ...settled };
  return becomeItem(itemId, opened!);
}

/** The open item, under the same workflow ID: a new run of type openItem, listed, paged and asked as any other. */
function becomeItem(itemId: string, item: OpenItem): Promise<never> {
  return makeContinueAsNewFunc<typeof openItem>({
    workflowType: OPEN_ITEM_WORKFLOW_TYPE,
    memo: openItemMemo(itemId, item),
    typedSearchAttributes: [
      { key: FLOW_KIND, value: OPEN_ITEM_WORKFLOW_TYPE },
      { key: PROVIDER_STATUS, value: item.lastSaid },
      ...(item.cardId ? [{ key: CARD_ID, value: item.cardId }] : []),
    ],
    // Items stay open for days: the item moves to each new build (docs/versioning.md).
    initialVersioningBehavior: 'AUTO_UPGRADE',
  })(item);
}

/** What the provider knows the call by, for the record. */
function refsOf(item: OpenItem): Pick<AttemptRecord, 'idempotencyKey' | 'lookupRef'> {
  return { ...(item.idempotencyKey ? { idempotencyKey: item.idempotencyKey } : {}), ...(item.lookup ? { lookupRef: item.lookup.ref } : {}) };
}

/** How the owner stopped, in the words an item's reason uses (Terminated, Canceled, TimedOut, …). */
function stoppedReason(status: string): string {
  const words: Record<string, string> = { TERMINATED: 'Terminated', CANCELLED: 'Canceled', TIMED_OUT: 'TimedOut', FAILED: 'Failed', CONTINUED_AS_NEW: 'ContinuedAsNew', NOT_FOUND: 'NotFound' };
  return `${words[status] ?? status} without the provider's word`;
}

function withoutAddress(item: OpenItem & { to?: string }): OpenItem {
  const { to: _to, ...rest } = item;
  return rest;
}

// docs/versioning.md: lives as long as its call (at most the movement's deadline), pinned to its build; its item starts on the current one.
declareVersioning('PINNED', moneyAttempt);
