/**
 * Money at the edges, the card workflow's own (issue 29, case 7, case 9 and the two suspected
 * ones): a delete whose answers are all lost or refused after it took effect, money timings that
 * could jam a card for a month, a card workflow under a steady stream of updates that must still
 * roll over before Temporal's history limit, and a stale card read that must not overwrite a
 * fresher balance. The sandbox's ledger is the truth; the card workflow's view must end at it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { isCardIssuingError, type MoneyUpdateResult } from '../../src/client';
import { createProviderClient } from '../../src/provider/client';
import { toCardView } from '../../src/shared/card-rules';
import { entityWorkflowId } from '../../src/shared/ids';
import { cardReadSignal } from '../../src/shared/messages';
import { entityQueue } from '../../src/shared/task-queues';
import { clientFailure, issueTestCard, workflowFailure } from '../helpers/flows';
import { asBridge, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { TIMINGS, cardBalance, faults, ledger, requests, stackOn, typedClient } from './helpers';

const DELETE_CARD = 'DELETE /cards/{cardId}';
const GET_CARD = 'GET /cards/{cardId}';
const DAY_MS = 86_400_000;
/** Enough budget that a stream of updates never waits for a provider window. */
const WIDE_WINDOWS = { rateLimit: { windowMs: 60_000, general: 10_000, sensitive: 10_000, balance: 10_000 } };

let stack: Stack;
afterEach(async () => stack?.close());

const execute = <T = any>(type: string, input: Record<string, unknown>, workflowId = uniqueId(type)): Promise<T> =>
  stack.client.workflow.execute(type, { taskQueue: stack.taskQueue, workflowId, args: [{ timings: TIMINGS, ...input }] });

/**
 * `p`, or a failure naming `what` when it has not settled within `ms` (an update that retries for minutes).
 * A `p` given up on may still fail later, when the stack closes: that failure is not this test's.
 */
async function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  p.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} not answered within ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

function fieldErrors(failure: { details?: ArrayLike<unknown> | null }): Record<string, string> {
  return ((failure.details?.[0] ?? {}) as { errors?: Record<string, string> }).errors ?? {};
}


/** Hands a card workflow a read of its card as reconcile-cards does (`as`: with the workers' signal MAC), stamped `readAt`; resolves once a workflow task has handled it. */
async function handOverRead(handle: WorkflowHandle, as: ReturnType<typeof asBridge>, read: ReturnType<typeof toCardView>, readAt: number): Promise<void> {
  const signalled = (await handle.fetchHistory()).events?.length ?? 0;
  await as.signal(cardReadSignal, { card: read, readAt });
  await waitUntil(
    async () => {
      const events = ((await handle.fetchHistory()).events ?? []).slice(signalled);
      const at = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'cardRead');
      return at >= 0 && events.slice(at).some((e) => e.workflowTaskCompletedEventAttributes);
    },
    20_000,
    'the read handled',
  );
}

/** The card workflow's view once it shows `status`. */
async function cardViewAt(cardId: string, status: string) {
  const cards = typedClient(stack);
  await waitUntil(async () => (await cards.cardState(cardId)).status === status, 30_000, `the card workflow shows ${status}`);
  return cards.cardState(cardId);
}

describe('case 7: a delete whose retries run out is read back and followed, not left ENABLE in our view', () => {
  test('a DELETE that takes effect and is answered 5xx on every try: the update answers, the view reaches DELETED at 0, the balance is returned once', async () => {
    stack = await stackOn('minimal');
    const card = await issueTestCard(stack, 1000);
    await cardViewAt(card.cardId, 'ENABLE');
    const before = await ledger(stack);
    // The first DELETE takes effect; it and every repeat are answered 500.
    await faults(stack, { [DELETE_CARD]: { errorRate: 1, afterEffect: true } });
    const deleted = await within(60_000, typedClient(stack).delete(card.cardId), 'the delete update');
    expect(['DELETING', 'DELETED']).toContain(deleted.status);
    expect((await cardViewAt(card.cardId, 'DELETED')).card).toMatchObject({ status: 'DELETED', availableBalance: 0 });
    const after = await ledger(stack);
    expect(after.cards.find((c) => c.cardId === card.cardId)?.availableBalance).toBe(0);
    expect(after.totals.returnedOnClose - before.totals.returnedOnClose).toBe(1000);
    expect(after.wallet - before.wallet).toBe(1000);
    expect(after.violations).toEqual([]);
    // The activity read the card back after the 500: the update never failed, so the workflow's own read-back was not needed.
    expect(await requests(stack, 'deleteCard')).toBe(1);
  }, 90_000);

  test('a DELETE that takes effect with its answer and read-back lost, then a repeat refused 404: the card workflow reads the card back and follows it to DELETED', async () => {
    stack = await stackOn('minimal');
    const card = await issueTestCard(stack, 1000);
    await cardViewAt(card.cardId, 'ENABLE');
    const before = await ledger(stack);
    // The first DELETE takes effect and is answered 500; the activity's read of the card hangs 4 s, then 500.
    await stack.control('PUT', '/config', { faults: { hangMs: 4000 } });
    await faults(stack, { [DELETE_CARD]: { errorRate: 1, afterEffect: true, maxFaults: 1 }, [GET_CARD]: { hangRate: 1, beforeEffect: true } });
    const update = typedClient(stack).delete(card.cardId);
    await waitUntil(async () => (await requests(stack, 'deleteCard')) >= 1, 20_000, 'the first DELETE');
    // While that read hangs: the repeat is refused (404, not retried); reads answer again. The sandbox merges an
    // endpoint's settings into those set before, so the error rate and fault budget are set anew.
    await faults(stack, { [DELETE_CARD]: { errorRate: 0, afterEffect: false, refuseRate: 1, refuseStatus: 404, maxFaults: 1000 } });
    const deleted = await within(60_000, update, 'the delete update');
    expect(['DELETING', 'DELETED']).toContain(deleted.status);
    expect(await requests(stack, 'deleteCard')).toBe(2);
    expect((await cardViewAt(card.cardId, 'DELETED')).card).toMatchObject({ status: 'DELETED', availableBalance: 0 });
    const after = await ledger(stack);
    expect(after.totals.returnedOnClose - before.totals.returnedOnClose).toBe(1000);
    expect(after.wallet - before.wallet).toBe(1000);
    expect(after.violations).toEqual([]);
  }, 90_000);
});

describe('case 9: money timings are bounded, so no caller can jam a card with a month-long deadline', () => {
  const REFUSED = [
    ['of 30 days', 30 * DAY_MS],
    ['below zero', -1],
  ] as const;

  test('a fund update on the card workflow with a deadline of 30 days, or below zero, is refused ValidationFailed naming timings.deadlineMs; nothing moves; a deadline within a day funds once', async () => {
    stack = await stackOn('contract');
    const card = await issueTestCard(stack, 1000);
    const cards = typedClient(stack);
    for (const [, deadlineMs] of REFUSED) {
      const refused = await clientFailure(cards.fundCard({ cardId: card.cardId, amount: 500, idempotencyKey: uniqueId('jam').slice(0, 40), timings: { ...TIMINGS, deadlineMs } }));
      expect(refused.type).toBe('ValidationFailed');
      expect(Object.keys(fieldErrors(refused))).toEqual(['timings.deadlineMs']);
      expect(refused.message).toContain('timings.deadlineMs');
    }
    expect(await requests(stack, 'fundCard')).toBe(0);
    expect(await cardBalance(stack, card.cardId)).toBe(1000);
    const funded = await cards.fundCard({ cardId: card.cardId, amount: 500, idempotencyKey: uniqueId('day').slice(0, 40), timings: { ...TIMINGS, deadlineMs: 60_000 } });
    expect(funded).toMatchObject({ status: 'COMPLETED', amount: 500 });
    expect(await requests(stack, 'fundCard')).toBe(1);
    expect(await cardBalance(stack, card.cardId)).toBe(1500);
    expect((await ledger(stack)).violations).toEqual([]);
  });

  test('the standalone fundCard workflow with a deadline of 30 days, or below zero, fails ValidationFailed naming timings.deadlineMs with no marker (pinned: release 2); nothing moves; a deadline within a day funds once', async () => {
    stack = await stackOn('contract');
    const card = await issueTestCard(stack, 1000);
    for (const [, deadlineMs] of REFUSED) {
      const workflowId = uniqueId('fund-jam');
      const refused = await workflowFailure(execute('fundCard', { cardId: card.cardId, amount: 500, timings: { ...TIMINGS, deadlineMs } }, workflowId));
      expect(refused.type).toBe('ValidationFailed');
      expect(Object.keys(fieldErrors(refused))).toEqual(['timings.deadlineMs']);
    }
    expect(await requests(stack, 'fundCard')).toBe(0);
    expect(await cardBalance(stack, card.cardId)).toBe(1000);
    const funded = await execute('fundCard', { cardId: card.cardId, amount: 500, timings: { ...TIMINGS, deadlineMs: DAY_MS } });
    expect(funded).toMatchObject({ status: 'COMPLETED', amount: 500 });
    expect(await cardBalance(stack, card.cardId)).toBe(1500);
    expect((await ledger(stack)).violations).toEqual([]);
  });
});

/** The refusal of a card workflow past its history limit: nothing done, send again under the same update ID. */
function rollingOver(err: unknown): number | undefined {
  if (!isCardIssuingError(err) || err.type !== 'RateLimited' || !err.message.includes('under the same update ID')) return undefined;
  return ((err.details?.[0] ?? {}) as { retryAfterMs?: number }).retryAfterMs ?? 1000;
}

describe('suspected A: a card workflow under a steady stream of updates still continues as new', () => {
  test('fundings sent without pause, three at a time, roll the workflow over twice while they flow; each is applied once, the ledger agrees', async () => {
    stack = await stackOn('minimal', WIDE_WINDOWS);
    const card = await issueTestCard(stack, 1000);
    const workflowId = entityWorkflowId('card', card.cardId);
    // The card's workflow again, with a small history budget (its continue-as-new carries it on).
    await stack.client.workflow.getHandle(workflowId).terminate('test: restart with a small history budget');
    const maxHistoryEvents = 60;
    const first = await stack.client.workflow.start('cardLifecycle', { taskQueue: entityQueue(stack.taskQueue), workflowId, args: [{ cardId: card.cardId, maxHistoryEvents }] });
    const cards = typedClient(stack);
    const fundedBefore = (await ledger(stack)).totals.funded;

    const applied: Array<{ amount: number; updateId: string; result: MoneyUpdateResult }> = [];
    let refusals = 0;
    let streaming = true;
    /** One funding, sent again under its update ID each time the workflow says it is rolling over. */
    const fundOnce = async (amount: number, updateId: string): Promise<void> => {
      for (;;) {
        try {
          applied.push({ amount, updateId, result: await cards.fundCard({ cardId: card.cardId, amount, idempotencyKey: updateId, timings: TIMINGS }) });
          return;
        } catch (err) {
          const retryAfterMs = rollingOver(err);
          if (retryAfterMs === undefined) throw err;
          refusals++;
          await sleep(retryAfterMs);
        }
      }
    };
    // Three lanes, each sending its next funding as soon as the last was answered: one is always running.
    const lanes = [1, 2, 3].map(async (lane) => {
      for (let n = 0; streaming; n++) await fundOnce(100 + lane, `stream-${lane}-${n}`);
    });
    const runsWhileStreaming = new Set<string>([first.firstExecutionRunId]);
    const deadline = Date.now() + 60_000;
    while (runsWhileStreaming.size < 3 && Date.now() < deadline) {
      runsWhileStreaming.add((await stack.client.workflow.getHandle(workflowId).describe()).runId);
      await sleep(100);
    }
    streaming = false;
    await Promise.all(lanes);

    expect(runsWhileStreaming.size).toBeGreaterThanOrEqual(3);
    expect(refusals).toBeGreaterThan(0);
    // The first run stopped taking updates a tenth past its budget: what it held finished, then it rolled over.
    const firstRunEvents = (await stack.client.workflow.getHandle(workflowId, first.firstExecutionRunId).fetchHistory()).events ?? [];
    expect(firstRunEvents[firstRunEvents.length - 1]?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
    expect(firstRunEvents.length).toBeLessThan(3 * maxHistoryEvents);

    // Each funding once: one POST each, the ledger moved by their sum, the view at the ledger.
    const sum = applied.reduce((a, x) => a + x.amount, 0);
    expect(new Set(applied.map((x) => x.result.operationId)).size).toBe(applied.length);
    expect(await requests(stack, 'fundCard')).toBe(applied.length);
    const book = await ledger(stack);
    expect(book.totals.funded - fundedBefore).toBe(sum);
    expect(await cardBalance(stack, card.cardId)).toBe(1000 + sum);
    expect(book.violations).toEqual([]);
    // The first funding, sent again on a later run under its update ID, answers its first outcome and moves nothing.
    const again = await cards.fundCard({ cardId: card.cardId, amount: applied[0].amount, idempotencyKey: applied[0].updateId, timings: TIMINGS });
    expect(again).toEqual(applied[0].result);
    expect(await requests(stack, 'fundCard')).toBe(applied.length);
    await waitUntil(async () => (await cards.cardState(card.cardId)).card?.availableBalance === 1000 + sum, 20_000, 'the view at the ledger');
    await stack.client.workflow.getHandle(workflowId).terminate('test done');
  }, 120_000);
});

/**
 * The card workflow's own reads run one after another (card-balance-coalesced), so a read lag that is
 * the same for every read never answers a later read with an older card; the inversion takes two readers,
 * the workflow and reconcile-cards (its `cardRead` correction, stamped when its read started), on replicas
 * lagging by different amounts. The test plays reconcile-cards: the lagging replica's answer is the
 * provider's own, read before the funding, and handed over after the workflow read the funded card.
 */
/** The view as the card workflow holds it: a look that reads nothing from the provider, so the reads handed over decide. */
const AS_HELD = { maxAgeMs: Infinity };

describe("suspected B: a card read stamped later but older by the provider's updatedAt does not overwrite a fresher balance", () => {
  test('a lagging read of the card from before a funding, handed over after the workflow read the funded card, leaves the view at the funded balance; a fresher read still corrects it, even one stamped before the read held', async () => {
    stack = await stackOn('minimal');
    const card = await issueTestCard(stack, 1000);
    const cards = typedClient(stack);
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    const provider = createProviderClient(stack.config.provider);
    const handOver = (read: ReturnType<typeof toCardView>, readAt: number) => handOverRead(handle, asBridge(stack, handle.workflowId), read, readAt);
    await cardViewAt(card.cardId, 'ENABLE');
    // The provider's answer before the funding: what a lagging replica still answers after it.
    const stale = toCardView((await provider.getCard(card.cardId)) as unknown as Record<string, unknown>);
    expect(stale.availableBalance).toBe(1000);
    await sleep(10);
    await cards.fundCard({ cardId: card.cardId, amount: 500, idempotencyKey: uniqueId('fund').slice(0, 40), timings: TIMINGS });
    // The update answered once the money moved; the workflow's read of the funded card follows (card-balance.ts).
    await waitUntil(async () => (await cards.cardState(card.cardId)).card?.availableBalance === 1500, 10_000, "the workflow's read after the funding");
    const held = await cards.cardState(card.cardId);
    expect(held.card?.availableBalance).toBe(1500);
    expect(held.balanceReadAt).toBeDefined();

    // A read started after the workflow's (stamped later), answered by a replica still showing the card before the funding.
    await handOver(stale, Math.max(Date.now(), held.balanceReadAt! + 1));
    expect((await cards.cardState(card.cardId, AS_HELD)).card?.availableBalance).toBe(1500);
    expect(await cardBalance(stack, card.cardId)).toBe(1500);

    // A spend whose webhook is lost: a fresher read of the provider still corrects the view.
    await stack.control('POST', `/cards/${card.cardId}/transactions`, { amount: 200, merchantName: 'Quiet', webhook: false });
    await sleep(10);
    const fresh = toCardView((await provider.getCard(card.cardId)) as unknown as Record<string, unknown>);
    expect(fresh.availableBalance).toBe(1300);
    await handOver(fresh, Date.now());
    expect((await cards.cardState(card.cardId, AS_HELD)).card?.availableBalance).toBe(1300);
    expect(await cardBalance(stack, card.cardId)).toBe(1300);

    // The other way: a read the provider answered later (its updatedAt) but stamped before the one held
    // (it started earlier and answered late) is taken: the provider's order decides, not the stamp.
    const heldAt = (await cards.cardState(card.cardId, AS_HELD)).balanceReadAt!;
    await stack.control('POST', `/cards/${card.cardId}/transactions`, { amount: 300, merchantName: 'Late', webhook: false });
    await sleep(10);
    const later = toCardView((await provider.getCard(card.cardId)) as unknown as Record<string, unknown>);
    expect(later.availableBalance).toBe(1000);
    await handOver(later, heldAt - 1000);
    expect((await cards.cardState(card.cardId, AS_HELD)).card?.availableBalance).toBe(1000);
    expect(await cardBalance(stack, card.cardId)).toBe(1000);
    expect((await ledger(stack)).violations).toEqual([]);
  });
});

/**
 * Suspected B again, the lag being the provider's own (sandbox `cardReadLagMs`: GET /cards/{cardId} answers
 * the card as it was that long ago, every reader alike). Two honest readers still disagree: the workflow's
 * read after a funding is stamped when it starts, its first try is refused and the retry a second later is
 * answered past the lag (the funded card); reconcile-cards' read (played by the test, as above), started
 * after the workflow's and so stamped later, is answered at once by the replica, before the funding. Handed
 * over after the workflow's, the later stamp must not take the view back to the balance before the funding.
 */
describe("suspected B, with the provider's own read lag", () => {
  test("a card workflow over a provider whose GET /cards lags: after a funding and a spend whose webhook is lost, lagging reads never take the view's balance back; a read without lag ends it at the ledger", async () => {
    // The read is asked for ASK_AFTER_MS after the funding: the lag is longer than that (a read started then answers
    // the card before the funding), shorter than it plus the read's retry a second later (which answers it funded).
    const ASK_AFTER_MS = 500;
    const LAG = ASK_AFTER_MS + 500;
    stack = await stackOn('minimal', WIDE_WINDOWS);
    const card = await issueTestCard(stack, 1000);
    const cards = typedClient(stack);
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    const provider = createProviderClient(stack.config.provider);
    const providerRead = async () => toCardView((await provider.getCard(card.cardId)) as unknown as Record<string, unknown>);
    const handOver = (read: ReturnType<typeof toCardView>, readAt: number) => handOverRead(handle, asBridge(stack, handle.workflowId), read, readAt);
    await cardViewAt(card.cardId, 'ENABLE');

    // Every balance the view shows, in order (polled throughout, and read after each step).
    const shown: number[] = [];
    const note = (balance: number | undefined) => {
      if (balance !== undefined && balance !== shown[shown.length - 1]) shown.push(balance);
    };
    // The view as held (maxAgeMs Infinity): looking reads nothing, so the only reads are the ones this test asks for.
    const look = async () => {
      const state = await cards.cardState(card.cardId, { maxAgeMs: Infinity });
      note(state.card?.availableBalance);
      return state;
    };
    let polling = true;
    const poller = (async () => {
      while (polling) {
        await look().catch(() => undefined);
        await sleep(20);
      }
    })();

    // From now on the provider's read side lags; the card was made more than the lag ago once GET answers it.
    await stack.control('PUT', '/config', { cardReadLagMs: LAG });
    await waitUntil(async () => (await providerRead()).status === 'ENABLE', 10_000, 'the card seen by the lagging read side');

    // The workflow's read after the funding: its first try is refused (500, before anything), the retry comes a second later.
    await faults(stack, { [GET_CARD]: { errorRate: 1, beforeEffect: true, maxFaults: 1 } });
    const refusedReads = async () => (await stack.control<{ endpoints: Record<string, { byStatus: Record<string, number> }> }>('GET', '/stats')).endpoints.getCard?.byStatus['500'] ?? 0;
    await cards.fundCard({ cardId: card.cardId, amount: 500, idempotencyKey: uniqueId('fund').slice(0, 40), timings: TIMINGS });
    // A caller asks for the funded balance: the workflow reads the card.
    await sleep(ASK_AFTER_MS);
    const reading = cards.cardState(card.cardId, { maxAgeMs: 0 });
    const deadline = Date.now() + 20_000;
    while ((await refusedReads()) < 1) {
      if (Date.now() > deadline) throw new Error("the workflow's first read was not refused");
      await sleep(5);
    }
    // reconcile-cards' read, started now (after the workflow's): the lagging replica still answers the card before the funding.
    const laggingAt = Date.now();
    const lagging = await providerRead();
    expect(lagging.availableBalance).toBe(1000);
    expect((await reading).card?.availableBalance).toBe(1500);
    // Cleared: a fault's budget starts again with every new configuration.
    await faults(stack, {});
    await waitUntil(async () => (await look()).card?.availableBalance === 1500, 20_000, "the workflow's retried read");
    const held = await look();
    // The workflow's retried read was answered past the lag: the funded card, stamped before the lagging read.
    expect(held.card?.availableBalance).toBe(1500);
    expect(held.balanceReadAt).toBeLessThan(laggingAt);
    await handOver(lagging, laggingAt);
    expect((await look()).card?.availableBalance).toBe(1500);

    // A spend whose webhook is lost; reads handed over as reconcile-cards makes them, each stamped when it started, lagging.
    await stack.control('POST', `/cards/${card.cardId}/transactions`, { amount: 200, merchantName: 'Quiet', webhook: false });
    const until = Date.now() + LAG + 1500;
    while (Date.now() < until) {
      const readAt = Date.now();
      await handOver(await providerRead(), readAt);
      await look();
      await sleep(100);
    }
    // The lag gone, a fresh read: the view ends at the ledger.
    await stack.control('PUT', '/config', { cardReadLagMs: 0 });
    const readAt = Date.now();
    await handOver(await providerRead(), readAt);
    const final = await look();
    polling = false;
    await poller;
    expect(final.card?.availableBalance).toBe(await cardBalance(stack, card.cardId));
    expect(final.card?.availableBalance).toBe(1300);

    // The balances shown follow the provider's own order of the card's states, never back to an earlier one.
    const history = [1000, 1500, 1300];
    expect(shown.every((b) => history.includes(b))).toBe(true);
    expect(shown.map((b) => history.indexOf(b))).toEqual([...shown.map((b) => history.indexOf(b))].sort((a, b) => a - b));
    expect(shown[shown.length - 1]).toBe(1300);
    expect((await ledger(stack)).violations).toEqual([]);
  }, 90_000);
});

/**
 * The balance read on demand (lib/card-balance.ts): a movement answered while a read is already under
 * way may not be in that read's answer; a caller asking after it gets a read of its own, queued behind
 * the one under way, never the answer of a read that started before the movement.
 */
describe('the balance read on demand', () => {
  test('a movement answered while a read asked for before it is under way: the next cardState reads again and shows both fundings', async () => {
    stack = await stackOn('minimal');
    const card = await issueTestCard(stack, 1000);
    await cardViewAt(card.cardId, 'ENABLE');
    const cards = typedClient(stack);
    await cards.fundCard({ cardId: card.cardId, amount: 100, idempotencyKey: uniqueId('first').slice(0, 40) });
    // The next read of the card is answered 3 s late, with the card as it was when asked.
    await stack.control('PUT', '/config', { faults: { hangMs: 3000 } });
    await faults(stack, { [GET_CARD]: { hangRate: 1, afterEffect: true, maxFaults: 1 } });
    const reads = async () => (await scheduledActivities(card.cardId)).filter((a) => a === 'getCard').length;
    const readsBefore = await reads();
    const reading = cards.cardState(card.cardId, { maxAgeMs: 0 });
    await waitUntil(async () => (await reads()) > readsBefore, 10_000, 'the read under way');
    await cards.fundCard({ cardId: card.cardId, amount: 200, idempotencyKey: uniqueId('second').slice(0, 40) });
    expect(await cardBalance(stack, card.cardId)).toBe(1300);
    // The read under way started before the second funding: its answer is marked stale at once.
    const read = await reading;
    expect(read.card?.availableBalance).toBe(1100);
    expect(read.movedSinceBalanceRead).toBe(true);
    const after = await cards.cardState(card.cardId);
    expect(after.card?.availableBalance).toBe(1300);
    expect(after.movedSinceBalanceRead).toBe(false);
    // One read per ask, none per movement: the funding, the read asked for, the funding, the read after it.
    const scheduled = await scheduledActivities(card.cardId);
    expect(scheduled.slice(scheduled.indexOf('moveMoney'))).toEqual(['moveMoney', 'getCard', 'moveMoney', 'getCard']);
    expect((await ledger(stack)).violations).toEqual([]);
  });
});

async function scheduledActivities(cardId: string): Promise<string[]> {
  const history = await stack.client.workflow.getHandle(entityWorkflowId('card', cardId)).fetchHistory();
  return (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => Boolean(n));
}
