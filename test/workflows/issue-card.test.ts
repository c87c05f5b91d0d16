import type { CardBinAnswer as CardBin } from '../../src/provider/answers';
import { entityWorkflowId } from '../../src/shared/ids';
import { entityQueue } from '../../src/shared/task-queues';
import { cardStateQuery, entityStateQuery } from '../../src/shared/messages';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { fixtureBins } from '../helpers/provider';
import { workflowFailure } from '../helpers/flows';
import { deliveries } from '../helpers/wait';

describe('issueCard', () => {
  let stack: Stack;
  let plain: CardBin;
  let us: CardBin;
  const issue = (input: Record<string, unknown>, workflowId = uniqueId('issue-card')) =>
    stack.client.workflow.execute('issueCard', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ timings: FAST_TIMINGS, ...input }],
    });

  const activityTypes = async (workflowId: string) =>
    ((await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);

  afterEach(async () => stack?.close());

  test('issues a card end to end: ENABLE, masked PAN only, money moved once', async () => {
    stack = await startStack({ cardProvisioningMs: 300 });
    ({ plain } = await fixtureBins(stack));
    const card = await issue({ cardBinId: plain.cardBinId, initialAmount: 2500, firstName: 'Ada', lastName: 'Lovelace' });
    expect(card.status).toBe('ENABLE');
    expect(card.availableBalance).toBe(2500);
    expect(card.cardNumber).toMatch(/^\d{6}\*{6}\d{4}$/);
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.violations).toEqual([]);
    expect(ledger.cards.find((c: { cardId: string }) => c.cardId === card.cardId).availableBalance).toBe(2500);
    // The card's own workflow received CARD_CREATED and knows the card.
    const state = await stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId)).query(cardStateQuery);
    expect(state.status).toBe('ENABLE');
  });

  test('completes by polling when every webhook is dropped', async () => {
    stack = await startStack({ cardProvisioningMs: 200, webhook: { dropRate: 1 } });
    ({ plain } = await fixtureBins(stack));
    const flowId = uniqueId('issue-card');
    const card = await issue({ cardBinId: plain.cardBinId, initialAmount: 1000, firstName: 'Grace', lastName: 'Hopper', timings: { ...FAST_TIMINGS, webhookWaitMs: 500 } }, flowId);
    expect(card.status).toBe('ENABLE');
    const created = (await deliveries(stack.control)).filter((d) => d.eventType === 'CARD_CREATED');
    expect(created.map((d) => d.status)).toEqual(['DROPPED']);
    // The card's own workflow polled and told the flow: data flowed one way, provider → entity → flow.
    const state = await stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId)).query(entityStateQuery);
    expect(state).toMatchObject({ status: 'ENABLE', source: 'poll' });
    // It runs on the entity queue, and its polls found the main queue's rate-limited queues.
    expect((await stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId)).describe()).taskQueue).toBe(entityQueue(stack.taskQueue));
    expect(await activityTypes(entityWorkflowId('card', card.cardId))).toContain('getCard');
    const flow = (await stack.client.workflow.getHandle(flowId).fetchHistory()).events ?? [];
    expect(await activityTypes(flowId)).not.toContain('getCard');
    expect(flow.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
  });

  test('a card whose first name is FAIL ends CardProvisioningFailed and the money comes back', async () => {
    stack = await startStack({ cardProvisioningMs: 100 });
    ({ plain } = await fixtureBins(stack));
    const before = await stack.control('GET', '/wallet');
    const failure = await workflowFailure(issue({ cardBinId: plain.cardBinId, initialAmount: 1000, firstName: 'FAIL', lastName: 'Case' }));
    expect(failure.type).toBe('CardProvisioningFailed');
    const after = await stack.control('GET', '/wallet');
    expect(after).toEqual(before);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });

  test('input that breaks the BIN rules fails ValidationFailed naming each field, before any provider call', async () => {
    stack = await startStack();
    ({ us } = await fixtureBins(stack));
    const failure = await workflowFailure(issue({ cardBinId: us.cardBinId, initialAmount: 50, firstName: 'R2-D2!', lastName: 'X', tags: ['1', '2', '3', '4', '5', '6', '7'] }));
    expect(failure.type).toBe('ValidationFailed');
    const { errors } = failure.details![0] as { errors: Record<string, string> };
    expect(Object.keys(errors).sort()).toEqual(expect.arrayContaining(['initialAmount', 'firstName', 'tags']));
    const stats = await stack.control('GET', '/stats');
    expect(stats.endpoints.createCard).toBeUndefined();
    expect(stats.endpoints.listCardBins.requests).toBeGreaterThan(0);
  });

  test('a US BIN needs a billing address: refused before POST /cards', async () => {
    stack = await startStack();
    ({ us } = await fixtureBins(stack));
    const failure = await workflowFailure(issue({ cardBinId: us.cardBinId, initialAmount: 500, firstName: 'Zoë', lastName: "O'Brien" }));
    expect(failure.type).toBe('ValidationFailed');
    expect((failure.details![0] as { errors: Record<string, string> }).errors).toHaveProperty('billingAddress');
  });

  test('non-Latin names are accepted and preserved', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    ({ plain } = await fixtureBins(stack));
    const card = await issue({ cardBinId: plain.cardBinId, initialAmount: 300, firstName: '李', lastName: 'Доронина' });
    expect(card.cardholderName).toContain('李');
    expect(card.cardholderName).toContain('Доронина');
  });

  test('a repeated start with the same workflow ID does not POST /cards again', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    ({ plain } = await fixtureBins(stack));
    const workflowId = uniqueId('issue-card-repeat');
    const args = [{ cardBinId: plain.cardBinId, initialAmount: 700, firstName: 'Once', lastName: 'Only', timings: FAST_TIMINGS }];
    const first = await stack.client.workflow.execute('issueCard', { taskQueue: stack.taskQueue, workflowId, args });
    const second = await stack.client.workflow.execute('issueCard', { taskQueue: stack.taskQueue, workflowId, args });
    expect(second.cardId).toBe(first.cardId);
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.cards).toHaveLength(1);
    expect(ledger.violations).toEqual([]);
  });
});
