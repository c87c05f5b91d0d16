import { status as grpcStatus } from '@grpc/grpc-js';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { CardIssuingClient } from '../../src/client';
import { oneTimeRevealKey } from '../../src/codec/card-secrets';
import { entityWorkflowId } from '../../src/shared/ids';
import { CARD_ACTION_PRIORITY } from '../../src/shared/task-queues';
import {
  cardMoneyMovedSignal,
  cardStateQuery,
  deleteCardUpdate,
  freezeCardUpdate,
  fundCardUpdate,
  providerEventSignal,
  refreshCardBalanceUpdate,
  revealSensitiveUpdate,
  setPinUpdate,
  unfreezeCardUpdate,
  withdrawFromCardUpdate,
} from '../../src/shared/messages';
import { waitUntil } from '../helpers/wait';
import { issueTestCard } from '../helpers/flows';
import { fixtureBins } from '../helpers/provider';
import { historyTexts } from '../helpers/history';
import { FAST_TIMINGS, allowed, asBridge, sealedTestPin, startStack, uniqueId, type Stack } from '../helpers/stack';

describe('the card workflow', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  test('serialises freeze, unfreeze, PIN, funding and delete as updates; answers state and transactions by query', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const { pin } = await fixtureBins(stack);
    const card = await issueTestCard(stack, 1000, { cardBinId: pin.cardBinId });
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));

    expect((await handle.executeUpdate(freezeCardUpdate, { args: [allowed(stack, card.cardId, 'freeze')] })).status).toBe('DISABLE');
    expect((await handle.executeUpdate(unfreezeCardUpdate, { args: [allowed(stack, card.cardId, 'unfreeze')] })).status).toBe('ENABLE');
    // Each action and its read-back go before the flows' calls on their queues (CARD_ACTION_PRIORITY): a person waits for both.
    const scheduled = ((await handle.fetchHistory()).events ?? []).map((e) => e.activityTaskScheduledEventAttributes).filter((a) => a?.activityType?.name);
    const afterAction = scheduled.flatMap((a, i) => (a!.activityType!.name === 'applyCardChange' ? [a, scheduled[i + 1]] : []));
    expect(afterAction.map((a) => [a?.activityType?.name, a?.priority?.priorityKey])).toEqual([
      ['applyCardChange', CARD_ACTION_PRIORITY], ['getCard', CARD_ACTION_PRIORITY],
      ['applyCardChange', CARD_ACTION_PRIORITY], ['getCard', CARD_ACTION_PRIORITY],
    ]);
    await handle.executeUpdate(setPinUpdate, { args: [allowed(stack, card.cardId, 'pin', { pin: await sealedTestPin(stack, '4821', handle.workflowId) })] });
    // Two fundings sent at once run one after the other, each once.
    const [a, b] = await Promise.all([
      handle.executeUpdate(fundCardUpdate, { args: [{ amount: 150, idempotencyKey: uniqueId('fund-150') }] }),
      handle.executeUpdate(fundCardUpdate, { args: [{ amount: 250, idempotencyKey: uniqueId('fund-250') }] }),
    ]);
    expect(a.operationId).not.toBe(b.operationId);
    await stack.control('POST', `/cards/${card.cardId}/transactions`, { amount: 120, merchantName: 'Coffee Shop' });
    await waitUntil(async () => (await handle.query(cardStateQuery)).recentTransactions.length === 1);
    const state = await handle.query(cardStateQuery);
    expect(state.recentTransactions[0]).toMatchObject({ amount: 120, merchantName: 'Coffee Shop' });

    const deleted = await handle.executeUpdate(deleteCardUpdate, { args: [allowed(stack, card.cardId, 'delete')] });
    expect(['DELETING', 'DELETED']).toContain(deleted.status);
    // No webhook says the deletion finished: the card workflow reads the card until the provider says DELETED,
    // and shows the balance the provider returned to the wallet.
    await waitUntil(async () => (await handle.query(cardStateQuery)).status === 'DELETED', 30_000, 'the card workflow sees DELETED');
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.cards.find((c: { cardId: string }) => c.cardId === card.cardId)).toMatchObject({ availableBalance: 0 });
    expect((await handle.query(cardStateQuery)).card).toMatchObject({ status: 'DELETED', availableBalance: 0 });
    expect(ledger.violations).toEqual([]);
  });

  test('validators refuse bad input before it is accepted: nothing reaches history or the provider', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    for (const [update, args] of [
      [setPinUpdate, [{ pin: '1123' }]],
      // Keyed, so that only its amount (below the provider's minimum) is refused.
      [fundCardUpdate, [{ amount: 50, idempotencyKey: uniqueId('fund-50') }]],
    ] as const) {
      const err = await handle.executeUpdate(update as typeof setPinUpdate, { args: args as never }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
      expect(((err as WorkflowUpdateFailedError).cause as { type?: string }).type).toBe('ValidationFailed');
    }
    // A rejected update leaves no event at all; the validators ran before acceptance.
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes || e.workflowExecutionUpdateCompletedEventAttributes)).toEqual([]);
    const { endpoints } = await stack.control('GET', '/stats');
    expect(endpoints.updateCardPin).toBeUndefined();
    expect(endpoints.fundCard).toBeUndefined();
  });

  test('continues as new before its history grows large, keeping state and de-duplication, and carries no contact data of CARD_CREATED', async () => {
    stack = await startStack();
    // A card workflow with a tiny history budget, for a second card id that the provider does not know.
    const cardId = `crd_${uniqueId('x').replace(/-/g, '').slice(0, 20)}`;
    const workflowId = uniqueId('card-can');
    const handle = await stack.client.workflow.start('cardLifecycle', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId, maxHistoryEvents: 20 }] });
    const firstRun = handle.firstExecutionRunId;
    const event = (n: number) => ({ eventId: `evt_tx_${n}`, eventType: 'CARD_TRANSACTION', createdAt: Date.now(), data: { cardId, amount: n, currency: 'USD', merchantName: `m${n}`, status: 'APPROVED' } });
    // As the bridge delivers them: with its MAC (a service's client, with the payload key alone, is not the provider's word).
    const bridge = asBridge(stack, workflowId);
    // CARD_CREATED as the provider sends it, with the cardholder's contact data: the view never shows it, and no later run carries it.
    const contact = { email: 'ada.contact@example.com', mobile: '7700900123', billingAddress: { line1: '12 Contact Row' } };
    await bridge.signal(providerEventSignal, { eventId: 'evt_created', eventType: 'CARD_CREATED', createdAt: Date.now(), data: { cardId, status: 'ENABLE', cardNumber: '4111111111111111', availableBalance: 1000, cardBinId: 'bin_visa_basic', ...contact } });
    for (let n = 1; n <= 30; n++) await bridge.signal(providerEventSignal, event(n));
    await bridge.signal(providerEventSignal, event(3)); // a duplicate from before the roll-over
    await waitUntil(async () => (await stack.client.workflow.getHandle(workflowId).describe()).runId !== firstRun);
    await waitUntil(async () => (await stack.client.workflow.getHandle(workflowId).query(cardStateQuery)).recentTransactions.length === 30);
    const state = await stack.client.workflow.getHandle(workflowId).query(cardStateQuery);
    expect(new Set(state.recentTransactions.map((t) => t.eventId)).size).toBe(30);
    expect(state.card).toMatchObject({ cardId, status: 'ENABLE', availableBalance: 1000, cardNumber: expect.not.stringContaining('11111111') });
    // The later run's history (its start input carries the state), decoded: no contact field.
    const { decoded } = await historyTexts(await stack.client.workflow.getHandle(workflowId).fetchHistory(), stack.config.codec);
    expect(decoded).toContain(cardId);
    for (const text of [contact.email, contact.mobile, contact.billingAddress.line1]) expect(decoded).not.toContain(text);
    await stack.client.workflow.getHandle(workflowId).terminate('test done');
  });

  test('the sensitive read reaches its caller, and the full history holds neither the PAN nor the CVV', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    const requester = await oneTimeRevealKey();
    const sealed = await handle.executeUpdate(revealSensitiveUpdate, { args: [allowed(stack, card.cardId, 'reveal', { publicKey: requester.publicKey })] });
    const sensitive = await requester.open(sealed, card.cardId);
    // Another requester's one-time key opens nothing of it.
    await expect((await oneTimeRevealKey()).open(sealed, card.cardId)).rejects.toThrow();
    expect(sensitive.cardNumber).toMatch(/^\d{16}$/);
    expect(sensitive.cardNumber.slice(-4)).toBe(card.cardNumber.slice(-4));
    // The issuing flow and the card workflow: as stored, and decoded with the payload codec.
    for (const h of [handle, stack.client.workflow.getHandle(card.issuedBy)]) {
      const { stored, decoded } = await historyTexts(await h.fetchHistory(), stack.config.codec);
      expect(decoded.length).toBeGreaterThan(100);
      for (const text of [stored, decoded]) {
        expect(text).not.toContain(sensitive.cardNumber);
        expect(text).not.toMatch(new RegExp(`"cvv"\\s*:\\s*"${sensitive.cvv}"`));
      }
    }
  });
});

/**
 * Money through the card workflow's updates, with the sandbox ledger as the truth: every movement
 * carries its caller's key (a keyless one is refused before it is accepted), a failed one never
 * blocks the next, and the same update ID (or the same caller key) never moves money twice, across
 * continue-as-new too.
 */
describe('money through the card workflow', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const client = () => new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing });
  /** A funding as any Temporal client may send it (the typed client always sends a key): its key, an update ID of its own. */
  const rawFund = async (cardId: string, args: { amount: number; idempotencyKey: string; timings?: object }, updateId = `raw-${uniqueId('fund')}`) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return { ...(await stack.client.workflow.getHandle(entityWorkflowId('card', cardId)).executeUpdate(fundCardUpdate, { args: [args], updateId })), updateId };
      } catch (err) {
        // The server's transient refusal while the card workflow rolls over (its task just failed on the
        // signals that raced the continue-as-new): nothing was applied; a caller sends it again under the
        // same update ID, as the typed client does (client/update-with-start.ts).
        if (attempt < 5 && (err as { cause?: { code?: number } }).cause?.code === grpcStatus.FAILED_PRECONDITION) {
          await new Promise((r) => setTimeout(r, 300));
          continue;
        }
        // The workflow's own refusal while it is over its history budget and rolling over (RateLimited,
        // retryAfterMs): nothing was applied; sent again under the same update ID, as its message says.
        const refused = err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure ? err.cause : undefined;
        if (attempt < 20 && refused?.type === 'RateLimited') {
          await new Promise((r) => setTimeout(r, Number((refused.details?.[0] as { retryAfterMs?: number } | undefined)?.retryAfterMs ?? 500)));
          continue;
        }
        throw err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure ? err.cause : err;
      }
    }
  };
  const cardBalance = async (cardId: string): Promise<number> =>
    (await stack.control('GET', '/ledger')).cards.find((c: { cardId: string }) => c.cardId === cardId).availableBalance;
  const fundRequests = async (): Promise<number> => (await stack.control('GET', '/stats')).endpoints.fundCard?.requests ?? 0;

  test('a funding that fails for the wallet does not block the next funding, under its own key', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const { availableBalance } = await stack.control('GET', '/wallet');
    await stack.control('POST', '/wallet', { amount: -(availableBalance - 100) });
    const shortKey = uniqueId('short');
    const failed = await rawFund(card.cardId, { amount: 500, idempotencyKey: shortKey, timings: FAST_TIMINGS }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ApplicationFailure);
    expect((failed as ApplicationFailure).type).toBe('InsufficientFunds');
    await stack.control('POST', '/wallet', { amount: availableBalance - 100 });

    const nextKey = uniqueId('refilled');
    const done = await rawFund(card.cardId, { amount: 500, idempotencyKey: nextKey, timings: FAST_TIMINGS });
    expect(done.status).toBe('COMPLETED');
    const failedKey = ((failed as ApplicationFailure).details as Array<{ idempotencyKey?: string }>).find((d) => d?.idempotencyKey)?.idempotencyKey;
    expect(failedKey).toBe(shortKey);
    expect(done.idempotencyKey).toBe(nextKey);
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

    const key = uniqueId('order');
    const first = await rawFund(card.cardId, { amount: 300, idempotencyKey: key, timings: FAST_TIMINGS });
    const again = await rawFund(card.cardId, { amount: 300, idempotencyKey: key, timings: FAST_TIMINGS }, first.updateId);
    expect(again).toEqual(first);

    const event = (n: number) => ({ eventId: `evt_roll_${n}`, eventType: 'CARD_TRANSACTION', createdAt: Date.now(), data: { cardId: card.cardId, amount: 0, currency: 'USD', merchantName: 'roll', status: 'DECLINED' } });
    for (let n = 0; n < 40; n++) await asBridge(stack, handle.workflowId).signal(providerEventSignal, event(n));
    // The stream may roll over more than once (the second run takes the signals the first one left):
    // wait for a run past the first whose history is within budget (one above it rolls over), or an update meets the overdue refusal.
    await waitUntil(
      async () => {
        const run = await stack.client.workflow.getHandle(workflowId).describe();
        return run.runId !== handle.firstExecutionRunId && run.historyLength <= 40;
      },
      60_000,
      'continue-as-new, settled within the history budget',
    );

    const afterRollover = await rawFund(card.cardId, { amount: 300, idempotencyKey: key, timings: FAST_TIMINGS }, first.updateId);
    expect(afterRollover).toEqual(first);
    // One POST: the update ID was answered from the card's memory each time, not posted again under its key.
    expect(await fundRequests()).toBe(1);
    expect(await cardBalance(card.cardId)).toBe(1300);
    // A new update ID under a new key is a new movement.
    await rawFund(card.cardId, { amount: 300, idempotencyKey: uniqueId('order'), timings: FAST_TIMINGS });
    expect(await cardBalance(card.cardId)).toBe(1600);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
    await stack.client.workflow.getHandle(workflowId).terminate('test done');
  });

  test('movements mark the view stale without reading it; many fresh reads asked at once share reads (one under way and one after it), and the view ends at the ledger', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    const reads = async () => ((await handle.fetchHistory()).events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'getCard').length;
    await waitUntil(async () => (await handle.query(cardStateQuery)).status === 'ENABLE', 20_000, 'the card enabled');
    const before = await reads();
    // A spend without its webhook, then twenty "a movement completed" signals at once: the view is stale, and nothing is read for it.
    await stack.control('POST', `/cards/${card.cardId}/transactions`, { amount: 420, merchantName: 'Quiet', webhook: false });
    await Promise.all(Array.from({ length: 20 }, (_, i) => asBridge(stack, handle.workflowId).signal(cardMoneyMovedSignal, { workflowId: `fund-card/${i}` })));
    await waitUntil(async () => (await handle.query(cardStateQuery)).movedSinceBalanceRead === true, 10_000, 'the view marked stale');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await reads()).toBe(before);
    expect((await handle.query(cardStateQuery)).card?.availableBalance).toBe(1000);
    // Twenty callers ask at once for a view read within 5 s and after the movements.
    const views = await Promise.all(Array.from({ length: 20 }, () => handle.executeUpdate(refreshCardBalanceUpdate, { args: [{ maxAgeMs: 5_000 }] })));
    expect(views.map((v) => v.card?.availableBalance)).toEqual(Array(20).fill(580));
    expect((await handle.query(cardStateQuery)).movedSinceBalanceRead).toBe(false);
    const added = (await reads()) - before;
    expect(added).toBeGreaterThanOrEqual(1);
    expect(added).toBeLessThanOrEqual(2);
  });

  test('a card deleted twice is followed once until the provider says DELETED', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    await waitUntil(async () => (await handle.query(cardStateQuery)).status === 'ENABLE', 20_000, 'the card enabled');
    const reads = async () => ((await handle.fetchHistory()).events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'getCard').length;
    const before = await reads();
    // The provider takes 6 s to delete: a follower reads at about 1, 3 and 7 s.
    await stack.control('PUT', '/config', { cardProvisioningMs: 6_000 });
    expect((await handle.executeUpdate(deleteCardUpdate, { args: [allowed(stack, card.cardId, 'delete')] })).status).toBe('DELETING');
    // The second delete out of step with the first follower's reads, so a second follower's would not share them.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await handle.executeUpdate(deleteCardUpdate, { args: [allowed(stack, card.cardId, 'delete')] })).status).toBe('DELETING');
    await waitUntil(async () => (await handle.query(cardStateQuery)).status === 'DELETED', 30_000, 'the card workflow sees DELETED');
    // Each delete reads the card once after it; one follower adds 3 reads (a second would add 2 more).
    expect((await reads()) - before).toBeLessThanOrEqual(2 + 3);
    expect((await handle.query(cardStateQuery)).card).toMatchObject({ status: 'DELETED', availableBalance: 0 });
  });

  test('a caller-key retry after the client lost the answer moves money once', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const cards = client();
    const first = await cards.fundCard({ cardId: card.cardId, amount: 250, idempotencyKey: 'order-4711', timings: FAST_TIMINGS });
    // The caller kept only its key (the answer, and with it the update ID, was lost): a new update, the same key.
    const retry = await rawFund(card.cardId, { amount: 250, idempotencyKey: 'order-4711', timings: FAST_TIMINGS }, 'a-new-attempt');
    expect(retry.operationId).toBe(first.operationId);
    expect(retry.idempotencyKey).toBe('order-4711');
    expect(await cardBalance(card.cardId)).toBe(1250);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });

  test('a keyless funding or withdrawal is refused ValidationFailed naming idempotencyKey, before it is accepted: nothing moves (issue 51)', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    for (const update of [fundCardUpdate, withdrawFromCardUpdate]) {
      // As a raw client sends it and then retries it: no key, and no update ID (the SDK draws a new one per call).
      for (let attempt = 1; attempt <= 2; attempt++) {
        const err = await handle.executeUpdate(update, { args: [{ amount: 300, timings: FAST_TIMINGS }] }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
        const refused = (err as WorkflowUpdateFailedError).cause as ApplicationFailure;
        expect(refused.type).toBe('ValidationFailed');
        expect(refused.message).toBe("idempotencyKey is required: a card's money update is repeated only under its key (a retry with the same key joins the first)");
        expect(refused.details).toEqual([{ errors: { idempotencyKey: expect.stringMatching(/^is required: /) } }]);
      }
    }
    // Refused by the validators: no update was accepted, nothing reached the provider, nothing moved.
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes || e.workflowExecutionUpdateCompletedEventAttributes)).toEqual([]);
    const { endpoints } = await stack.control('GET', '/stats');
    expect(endpoints.fundCard).toBeUndefined();
    expect(endpoints.withdrawFromCard).toBeUndefined();
    expect(await cardBalance(card.cardId)).toBe(1000);
    // The same funding under a key moves, once.
    await rawFund(card.cardId, { amount: 300, idempotencyKey: uniqueId('keyed'), timings: FAST_TIMINGS });
    expect(await cardBalance(card.cardId)).toBe(1300);
    expect(await fundRequests()).toBe(1);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });
});
