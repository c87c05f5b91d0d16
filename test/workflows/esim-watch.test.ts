/** The esim/<esimNo> workflow: usage read at most once a minute and answered by query; alerts recorded and pushed. */
import { CardIssuingClient } from '../../src/client';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

describe('eSIM after the purchase', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const usageReads = async (): Promise<number> => (await stack.control('GET', '/stats')).endpoints.getEsimUsage?.requests ?? 0;

  test('usage is read from the provider at most once a minute, and the query answers it without a call', async () => {
    stack = await startStack({ esimIssueMs: 50 });
    const client = new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing });
    const order = await client.purchaseEsim({ planNo: 'epln_global_1gb', idempotencyKey: uniqueId('esim').slice(0, 40), timings: FAST_TIMINGS });
    const esimNo = order.esimNo!;

    const first = await client.esimUsage(esimNo);
    expect(first.usage).toMatchObject({ esimNo });
    expect(first.usageReadAt).toEqual(expect.any(Number));
    // Three more asks within the minute: answered from what the workflow holds.
    const again = await Promise.all([client.esimUsage(esimNo), client.esimUsage(esimNo), client.esimUsage(esimNo)]);
    for (const w of again) expect(w.usageReadAt).toBe(first.usageReadAt);
    expect(await usageReads()).toBe(1);
    expect((await client.esimWatch(esimNo)).usage).toEqual(first.usage);
    expect(await usageReads()).toBe(1);
  });

  /** Any running workflow can subscribe; an idle entity workflow stands in, and its history shows what it was sent. */
  async function aSubscriber() {
    const subscriber = `esim-subscriber-${uniqueId('s')}`;
    await stack.client.workflow.start('providerEntity', { taskQueue: stack.taskQueue, workflowId: subscriber, args: [{ kind: 'unrouted', entityId: subscriber }] });
    const pushed = async () => {
      const history = await stack.client.workflow.getHandle(subscriber).fetchHistory();
      return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'entityState').length;
    };
    return { subscriber, pushed };
  }

  test('ESIM_USAGE_ALERT and ESIM_EXPIRED are recorded on the entity and reach a subscriber', async () => {
    stack = await startStack({ esimIssueMs: 50 });
    const client = new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing });
    const order = await client.purchaseEsim({ planNo: 'epln_global_1gb', idempotencyKey: uniqueId('esim').slice(0, 40), timings: FAST_TIMINGS });
    const esimNo = order.esimNo!;
    const { subscriber, pushed } = await aSubscriber();
    await client.subscribeToEsim(esimNo, subscriber);
    // Each alert, on its own, reaches the subscriber (alerts that arrive together are pushed together).
    // The expiry is sent only once the entity recorded the usage alert: webhooks may arrive out of order
    // (a delivery answered 503 under load is redelivered later), so the order asserted below is made here,
    // not left to the delivery (the cause of this test's rare failure: the expiry recorded first).
    await stack.control('POST', `/esim/esims/${esimNo}/usage`, { dataUsedMb: 900 });
    await waitUntil(async () => (await client.esimWatch(esimNo)).alerts.some((a) => a.eventType === 'ESIM_USAGE_ALERT'), 30_000, 'the entity to record the usage alert');
    await waitUntil(async () => (await pushed()) >= 1, 30_000, 'the subscriber to hear of the usage alert');
    await stack.control('POST', `/esim/esims/${esimNo}/usage`, { dataUsedMb: 1024 });
    await waitUntil(async () => (await pushed()) >= 2, 30_000, 'the subscriber to hear of the expiry');

    const watch = await client.esimWatch(esimNo);
    expect(watch.alerts.map((a) => a.eventType)).toEqual(['ESIM_USAGE_ALERT', 'ESIM_EXPIRED']);
    expect(watch.alerts[0].data).toMatchObject({ thresholdPercent: 80 });
    await stack.client.workflow.getHandle(subscriber).terminate('test over');
  });

  // The cause of the test above's rare failure: its subscription and the alert reached a new entity
  // workflow in one workflow task, the SDK handed the alert to its handler first (registered first),
  // and a subscriber was told only of a status, which an alert is not. Here the alert is recorded first.
  test('a subscriber that subscribes after an alert was recorded is told the state at once', async () => {
    stack = await startStack({ esimIssueMs: 50 });
    const client = new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing });
    const order = await client.purchaseEsim({ planNo: 'epln_global_1gb', idempotencyKey: uniqueId('esim').slice(0, 40), timings: FAST_TIMINGS });
    const esimNo = order.esimNo!;
    await stack.control('POST', `/esim/esims/${esimNo}/usage`, { dataUsedMb: 900 });
    await waitUntil(async () => (await client.esimWatch(esimNo)).alerts.length === 1, 30_000, 'the entity to record the usage alert');
    const { subscriber, pushed } = await aSubscriber();
    await client.subscribeToEsim(esimNo, subscriber);
    await waitUntil(async () => (await pushed()) >= 1, 30_000, 'the late subscriber to be told');
    await stack.client.workflow.getHandle(subscriber).terminate('test over');
  });
});
