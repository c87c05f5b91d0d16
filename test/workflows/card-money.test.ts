/**
 * Money through the card workflow's updates, with the sandbox ledger as the truth: a keyless
 * movement's key comes from its update ID, so a failed one never blocks the next, and the same
 * update ID (or the same caller key) never moves money twice, across continue-as-new too.
 */
import { ApplicationFailure } from '@temporalio/common';
import { entityWorkflowId } from '../../src/shared/ids';
import { providerEventSignal } from '../../src/shared/messages';
import { CardIssuingClient } from '../../src/starter/client';
import { issueTestCard } from '../helpers/flows';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

describe('money through the card workflow', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const client = () => new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec });
  const cardBalance = async (cardId: string): Promise<number> =>
    (await stack.control('GET', '/ledger')).cards.find((c: { cardId: string }) => c.cardId === cardId).availableBalance;
  const fundRequests = async (): Promise<number> => (await stack.control('GET', '/stats')).endpoints.fundCard?.requests ?? 0;

  test('a keyless funding that fails for the wallet does not block the next keyless funding', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const cards = client();
    const { availableBalance } = await stack.control('GET', '/wallet');
    await stack.control('POST', '/wallet', { amount: -(availableBalance - 100) });
    const failed = await cards.fund(card.cardId, { amount: 500, timings: FAST_TIMINGS }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ApplicationFailure);
    expect((failed as ApplicationFailure).type).toBe('InsufficientFunds');
    await stack.control('POST', '/wallet', { amount: availableBalance - 100 });

    const done = await cards.fund(card.cardId, { amount: 500, timings: FAST_TIMINGS });
    expect(done.status).toBe('COMPLETED');
    const failedKey = ((failed as ApplicationFailure).details as Array<{ idempotencyKey?: string }>).find((d) => d?.idempotencyKey)?.idempotencyKey;
    expect(failedKey).toEqual(expect.any(String));
    expect(done.idempotencyKey).not.toBe(failedKey);
    expect(await cardBalance(card.cardId)).toBe(1500);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });

  test('the same update ID twice moves money once, before and after continue-as-new', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    // The card's workflow again, with a tiny history budget so that it rolls over soon.
    const workflowId = entityWorkflowId('card', card.cardId);
    await stack.client.workflow.getHandle(workflowId).terminate('test: restart with a small history budget');
    const handle = await stack.client.workflow.start('cardLifecycle', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, maxHistoryEvents: 40 }] });
    const cards = client();

    const first = await cards.fund(card.cardId, { amount: 300, timings: FAST_TIMINGS });
    const again = await cards.fund(card.cardId, { amount: 300, timings: FAST_TIMINGS }, { updateId: first.updateId });
    expect(again).toEqual(first);

    const event = (n: number) => ({ eventId: `evt_roll_${n}`, eventType: 'CARD_TRANSACTION', createdAt: Date.now(), data: { cardId: card.cardId, amount: 0, currency: 'USD', merchantName: 'roll', status: 'DECLINED' } });
    for (let n = 0; n < 40; n++) await handle.signal(providerEventSignal, event(n));
    await waitUntil(async () => (await stack.client.workflow.getHandle(workflowId).describe()).runId !== handle.firstExecutionRunId, 60_000, 'continue-as-new');

    const afterRollover = await cards.fund(card.cardId, { amount: 300, timings: FAST_TIMINGS }, { updateId: first.updateId });
    expect(afterRollover).toEqual(first);
    expect(await fundRequests()).toBe(1);
    expect(await cardBalance(card.cardId)).toBe(1300);
    // A new update ID is a new movement.
    await cards.fund(card.cardId, { amount: 300, timings: FAST_TIMINGS });
    expect(await cardBalance(card.cardId)).toBe(1600);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
    await stack.client.workflow.getHandle(workflowId).terminate('test done');
  });

  test('a caller-key retry after the client lost the answer moves money once', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const cards = client();
    const first = await cards.fund(card.cardId, { amount: 250, idempotencyKey: 'order-4711', timings: FAST_TIMINGS });
    // The caller kept only its key (the answer, and with it the update ID, was lost): a new update, the same key.
    const retry = await cards.fund(card.cardId, { amount: 250, idempotencyKey: 'order-4711', timings: FAST_TIMINGS }, { updateId: 'a-new-attempt' });
    expect(retry.operationId).toBe(first.operationId);
    expect(retry.idempotencyKey).toBe('order-4711');
    expect(await cardBalance(card.cardId)).toBe(1250);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });
});
