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

  test('a genuinely signed delivery whose timestamp is hours old: applied once when new and in order, answered 200 when applied, refused when it would go backwards', async () => {
    stack = await startStack();
    const id = 'kyc_stale1';
    const workflowId = entityWorkflowId('kyc', id);
    await stack.client.workflow.start('providerEntity', { taskQueue: stack.taskQueue, workflowId, args: [{ kind: 'kyc', entityId: id }] });
    // The provider redelivers an old event with its first delivery's timestamp, two hours ago.
    const twoHoursAgo = () => Date.now() - 2 * 60 * 60 * 1000;
    const signer = new HmacSha256Scheme({ apiKey: stack.config.provider.apiKey, secret: stack.config.provider.webhookSecret, now: twoHoursAgo });
    const deliver = async (eventId: string, kycStatus: string) => {
      const body = JSON.stringify({ eventId, eventType: 'CARDHOLDER_KYC_STATUS', createdAt: twoHoursAgo(), data: { id, kycStatus } });
      const res = await fetch(`${stack.bridge.url}/webhooks/provider`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signer.sign({ method: 'POST', pathWithQuery: '/webhooks/provider', body }) },
        body,
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect(await deliver('evt_stale_a', 'APPROVED')).toMatchObject({ status: 200, body: { late: true } });
    const handle = stack.client.workflow.getHandle(workflowId);
    await waitUntil(async () => (await handle.query(entityStateQuery)).status === 'APPROVED', 10_000, 'the late event applied');

    expect(await deliver('evt_stale_a', 'APPROVED')).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(await deliver('evt_stale_b', 'PENDING')).toMatchObject({ status: 401, body: { reason: 'STALE_TIMESTAMP' } });
    expect(await handle.query(entityStateQuery)).toMatchObject({ status: 'APPROVED', eventCount: 1 });
    await handle.terminate('test done');
  });

  test('a captured delivery replayed after the provider\'s redelivery horizon, or for an entity with no running workflow, is refused and starts nothing', async () => {
    stack = await startStack();
    const deliverAt = async (at: () => number, id: string, eventId: string, status: string) => {
      const signer = new HmacSha256Scheme({ apiKey: stack.config.provider.apiKey, secret: stack.config.provider.webhookSecret, now: at });
      const body = JSON.stringify({ eventId, eventType: 'CARD_CREATED', createdAt: at(), data: { cardId: id, status } });
      const res = await fetch(`${stack.bridge.url}/webhooks/provider`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signer.sign({ method: 'POST', pathWithQuery: '/webhooks/provider', body }) },
        body,
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const exists = async (workflowId: string) => stack.client.workflow.getHandle(workflowId).describe().then(() => true, () => false);

    // A card whose workflow is gone (history past retention, or never started here): a late CARD_CREATED does not bring it back ENABLE.
    const gone = `crd_gone_${Date.now()}`;
    expect(await deliverAt(() => Date.now() - 2 * 3_600_000, gone, 'evt_gone', 'ENABLE')).toMatchObject({ status: 401, body: { reason: 'STALE_TIMESTAMP' } });
    expect(await exists(entityWorkflowId('card', gone))).toBe(false);

    // Older than the provider's redelivery could make it (a day): refused without asking, even for a running entity.
    const live = `crd_live_${Date.now()}`;
    await stack.client.workflow.start('cardLifecycle', { taskQueue: `${stack.taskQueue}-entities`, workflowId: entityWorkflowId('card', live), args: [{ cardId: live }] });
    expect(await deliverAt(() => Date.now() - 30 * 3_600_000, live, 'evt_replayed', 'ENABLE')).toMatchObject({ status: 401, body: { reason: 'STALE_TIMESTAMP' } });
    await stack.client.workflow.getHandle(entityWorkflowId('card', live)).terminate('test done');
  });
});
