import { HmacSha256Scheme } from '../../src/provider/signing';
import { entityWorkflowId } from '../../src/shared/ids';
import { entityStateQuery, subscribeSignal } from '../../src/shared/messages';
import { startStack, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

describe('late events', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  test('an event for an entity whose workflow closed long ago starts a fresh run that records it: no error loop', async () => {
    stack = await startStack();
    const id = 'kyc_late1';
    const workflowId = entityWorkflowId('kyc', id);
    // The entity's workflow ran, saw its final status and closed after its linger.
    const first = await stack.client.workflow.start('providerEntity', { taskQueue: stack.taskQueue, workflowId, args: [{ kind: 'kyc', entityId: id, lingerMs: 200 }] });
    await first.signal(subscribeSignal, { workflowId: 'nobody-waits' });
    const signer = new HmacSha256Scheme({ apiKey: stack.config.provider.apiKey, secret: stack.config.provider.webhookSecret });
    const deliver = async (eventId: string) => {
      const body = JSON.stringify({ eventId, eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id, kycStatus: 'APPROVED' } });
      const res = await fetch(`${stack.bridge.url}/webhooks/provider`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signer.sign({ method: 'POST', pathWithQuery: '/webhooks/provider', body }) },
        body,
      });
      return res.status;
    };
    expect(await deliver('evt_late_a')).toBe(200);
    const closed = await first.result();
    expect(closed.status).toBe('APPROVED');

    // A redelivery arriving after the close is accepted (200, so the provider stops), held by a new run, and searchable.
    expect(await deliver('evt_late_a')).toBe(200);
    const latest = stack.client.workflow.getHandle(workflowId);
    await waitUntil(async () => (await latest.describe()).runId !== first.firstExecutionRunId, 10_000, 'a fresh run');
    const state = await latest.query(entityStateQuery);
    expect(state).toMatchObject({ status: 'APPROVED', eventCount: 1 });
    expect((await latest.describe()).status.name).toBe('RUNNING');
    await latest.terminate('test done');
  });
});
