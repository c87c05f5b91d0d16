/**
 * The card's balance read on demand (issue 52, lib/card-balance.ts): a movement answers without
 * reading the card and marks the view stale; `cardState` (the typed client) and the CLI's `card`
 * read it when the view is older than their bound or a movement happened since; a stale view nobody
 * asks about is read once per idle period, however many movements happen in it.
 */
import { CardIssuingError } from '../../src/client';
import { entityWorkflowId } from '../../src/shared/ids';
import { cardStateQuery } from '../../src/shared/messages';
import { entityQueue } from '../../src/shared/task-queues';
import type { CardLifecycleState } from '../../src/shared/types';
import { issueTestCard } from '../helpers/flows';
import { waitUntil } from '../helpers/wait';
import { startStack, uniqueId, type Stack } from '../helpers/stack';
import { cardBalance, faults, typedClient } from '../money-edges/helpers';
import { jsonOf, runInProcess } from '../starter/cli-helpers';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ cardProvisioningMs: 50 });
});
afterAll(async () => stack?.close());

const getCardReads = async (workflowId: string): Promise<number[]> => {
  const events = (await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'getCard').map((e) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6));
};
const held = (workflowId: string) => stack.client.workflow.getHandle(workflowId).query(cardStateQuery) as Promise<CardLifecycleState>;

test("a movement's answer reads nothing; cardState and the CLI's card with a freshness bound then return the moved balance, read after it", async () => {
  const card = await issueTestCard(stack, 1000);
  const workflowId = entityWorkflowId('card', card.cardId);
  const cards = typedClient(stack);
  await waitUntil(async () => (await held(workflowId)).status === 'ENABLE', 20_000, 'the card enabled');
  const readsBefore = (await getCardReads(workflowId)).length;

  const moved = await cards.fundCard({ cardId: card.cardId, amount: 500, idempotencyKey: uniqueId('fund').slice(0, 40) });
  expect(moved).toMatchObject({ cardId: card.cardId, amount: 500, status: 'COMPLETED', operationId: expect.stringMatching(/^oaop_/) });
  // The answer carries the provider's operation; the view says its balance predates it, and no read was made for it.
  const stale = await held(workflowId);
  expect(stale.movedSinceBalanceRead).toBe(true);
  expect(stale.lastMovedAt).toEqual(expect.any(Number));
  expect(stale.card?.availableBalance).toBe(1000);
  expect((await getCardReads(workflowId)).length).toBe(readsBefore);
  // Asked with the view held (no bound), nothing is read either.
  expect((await cards.cardState(card.cardId, { maxAgeMs: Infinity })).card?.availableBalance).toBe(1000);

  const fresh = await cards.cardState(card.cardId, { maxAgeMs: 2_000 });
  expect(fresh.card?.availableBalance).toBe(1500);
  expect(fresh.movedSinceBalanceRead).toBe(false);
  expect(fresh.balanceReadAt).toBeGreaterThanOrEqual(stale.lastMovedAt!);
  expect(fresh.balanceAgeMs).toBeLessThan(2_000);
  expect((await getCardReads(workflowId)).length).toBe(readsBefore + 1);
  // Fresh enough for a bound of a minute: answered from the view, without a read.
  expect((await cards.cardState(card.cardId, { maxAgeMs: 60_000 })).card?.availableBalance).toBe(1500);
  expect((await getCardReads(workflowId)).length).toBe(readsBefore + 1);

  // The CLI's card, after a withdrawal, with a bound of its own.
  await cards.withdrawFromCard({ cardId: card.cardId, amount: 200, idempotencyKey: uniqueId('withdraw').slice(0, 40) });
  const shown = await runInProcess(stack, ['card', card.cardId, '--max-age-ms', '1000', '--json']);
  expect(shown.code).toBe(0);
  expect(jsonOf(shown).result).toMatchObject({ card: { availableBalance: 1300 }, movedSinceBalanceRead: false, balanceAgeMs: expect.any(Number) });
  expect(await cardBalance(stack, card.cardId)).toBe(1300);
});

test('a bound that is not a whole number of milliseconds from 0 to a day is refused naming maxAgeMs, before anything is asked', async () => {
  const cards = typedClient(stack);
  for (const maxAgeMs of [-1, 1.5, 86_400_001, Number.NaN]) {
    const err = await cards.cardState('crd_never_asked', { maxAgeMs }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CardIssuingError);
    expect(err).toMatchObject({ type: 'ValidationFailed', message: expect.stringContaining('maxAgeMs') });
  }
  const cli = await runInProcess(stack, ['card', 'crd_never_asked', '--max-age-ms', 'soon']);
  expect(cli.code).toBe(2);
  expect(cli.stderr).toMatch(/--max-age-ms must be a whole number of milliseconds \(got "soon"\)/);
});

/** The card workflow `card/<cardId>` restarted with a short idle period (a start may shorten it), in place of the one issuance started. */
async function cardWithIdlePeriod(idleMs: number): Promise<{ cardId: string; workflowId: string }> {
  const card = await issueTestCard(stack, 1000);
  const workflowId = entityWorkflowId('card', card.cardId);
  await waitUntil(async () => (await held(workflowId)).status === 'ENABLE', 20_000, 'the card enabled');
  await stack.client.workflow.getHandle(workflowId).terminate('the test starts the card workflow with a short idle period');
  await stack.client.workflow.start('cardLifecycle', { workflowId, taskQueue: entityQueue(stack.taskQueue), args: [{ cardId: card.cardId, balanceIdleReadMs: idleMs }] });
  return { cardId: card.cardId, workflowId };
}

test('a movement answered while the idle read is under way gets an idle read of its own after it: the view does not stay stale', async () => {
  const IDLE_MS = 1_000;
  const { cardId, workflowId } = await cardWithIdlePeriod(IDLE_MS);
  const cards = typedClient(stack);
  await cards.fundCard({ cardId, amount: 100, idempotencyKey: uniqueId('first').slice(0, 40) });
  // The idle read answers 3 s late, with the card as it was when asked.
  await stack.control('PUT', '/config', { faults: { hangMs: 3000 } });
  await faults(stack, { 'GET /cards/{cardId}': { hangRate: 1, afterEffect: true, maxFaults: 1 } });
  await waitUntil(async () => (await getCardReads(workflowId)).length >= 1, 10_000, 'the idle read under way');
  await cards.fundCard({ cardId, amount: 200, idempotencyKey: uniqueId('second').slice(0, 40) });
  await faults(stack, {});
  // Nobody asks: the idle read after the one under way brings the view to both fundings.
  await waitUntil(async () => (await held(workflowId)).movedSinceBalanceRead === false, 20_000, 'the idle read after the second funding');
  expect((await held(workflowId)).card?.availableBalance).toBe(await cardBalance(stack, cardId));
  expect(await getCardReads(workflowId)).toHaveLength(2);
});

test('a burst of movements on a card nobody asks about costs at most one read per idle period, and the last one ends the view at the ledger', async () => {
  const IDLE_MS = 2_000;
  const card = await issueTestCard(stack, 1000);
  const workflowId = entityWorkflowId('card', card.cardId);
  await waitUntil(async () => (await held(workflowId)).status === 'ENABLE', 20_000, 'the card enabled');
  // A run of the card workflow with a short idle period (a start may shorten it), in place of the one issuance started.
  await stack.client.workflow.getHandle(workflowId).terminate('the test starts the card workflow with a short idle period');
  await stack.client.workflow.start('cardLifecycle', { workflowId, taskQueue: entityQueue(stack.taskQueue), args: [{ cardId: card.cardId, balanceIdleReadMs: IDLE_MS }] });
  const cards = typedClient(stack);

  const firstAt = Date.now();
  let movements = 0;
  while (Date.now() - firstAt < 2.5 * IDLE_MS) {
    await cards.fundCard({ cardId: card.cardId, amount: 100, idempotencyKey: uniqueId('burst').slice(0, 40) });
    movements++;
  }
  const lastAt = Date.now();
  // The idle read after the last movement brings the view to the ledger, and nothing reads after it.
  await waitUntil(async () => (await held(workflowId)).movedSinceBalanceRead === false, 4 * IDLE_MS, 'the idle read after the burst');
  const view = await held(workflowId);
  expect(view.card?.availableBalance).toBe(await cardBalance(stack, card.cardId));
  expect(view.card?.availableBalance).toBe(1000 + 100 * movements);

  const reads = await getCardReads(workflowId);
  expect(movements).toBeGreaterThan(reads.length);
  // At most one read per idle period from the first movement to the last read: never one per movement.
  const periods = Math.ceil((reads[reads.length - 1] - firstAt) / IDLE_MS);
  expect(reads.length).toBeGreaterThanOrEqual(1);
  expect(reads.length).toBeLessThanOrEqual(periods);
  for (let i = 1; i < reads.length; i++) expect(reads[i] - reads[i - 1]).toBeGreaterThanOrEqual(IDLE_MS - 100);
  expect(reads[reads.length - 1]).toBeGreaterThanOrEqual(lastAt - IDLE_MS);
  await new Promise((r) => setTimeout(r, IDLE_MS + 500));
  expect(await getCardReads(workflowId)).toHaveLength(reads.length);
});
