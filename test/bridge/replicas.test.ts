/**
 * Bridge replicas share nothing in memory that safety depends on: each keeps its own nonce
 * cache, so a replay through another replica passes its signature check, and the entity workflow's
 * eventId de-duplication makes it harmless (README, "Several bridges").
 */
import { startBridge, type RunningBridge } from '../../src/bridge';
import { entityWorkflowId } from '../../src/shared/ids';
import { entityStateQuery } from '../../src/shared/messages';
import { startStack, type Stack } from '../helpers/stack';
import { signWebhook } from '../helpers/webhooks';

describe('two bridge replicas', () => {
  let stack: Stack;
  let replica: RunningBridge;
  beforeAll(async () => {
    stack = await startStack();
    replica = await startBridge(stack.config, { port: 0 });
  });
  afterAll(async () => {
    await replica?.close();
    await stack?.close();
  });

  /** One signed delivery: the exact bytes and headers the provider would send (and may repeat). */
  const signed = (body: string) => signWebhook(body, stack.config.provider);
  const deliver = async (bridge: RunningBridge, body: string, headers: Record<string, string>) => {
    const res = await fetch(`${bridge.url}/webhooks/provider`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json()) as { eventId?: string; duplicate?: boolean } };
  };
  const entityState = (kycId: string) => stack.client.workflow.getHandle(entityWorkflowId('kyc', kycId)).query(entityStateQuery);

  test('the same signed bytes through both replicas: the second replica accepts them (its nonce cache is its own), the entity applies the event once', async () => {
    const body = JSON.stringify({ eventId: 'evt_replica_1', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id: 'kyc_replicas_1', kycStatus: 'APPROVED' } });
    const headers = signed(body);
    const first = await deliver(stack.bridge, body, headers);
    expect(first).toEqual({ status: 200, body: expect.objectContaining({ eventId: 'evt_replica_1' }) });
    // The replay through the other replica passes its signature and nonce checks: nothing in its memory has seen it.
    const replay = await deliver(replica, body, headers);
    expect(replay).toEqual({ status: 200, body: expect.objectContaining({ eventId: 'evt_replica_1' }) });
    expect(replay.body.duplicate).toBeUndefined();
    // The first replica's own cache still answers its repeat without signalling.
    expect((await deliver(stack.bridge, body, headers)).body).toMatchObject({ duplicate: true });
    expect(await entityState('kyc_replicas_1')).toMatchObject({ eventCount: 1, status: 'APPROVED' });
  });

  test('without an eventId both replicas derive the same one from the content, so a replay is applied once too', async () => {
    const body = JSON.stringify({ eventType: 'CARDHOLDER_KYC_STATUS', data: { id: 'kyc_replicas_2', kycStatus: 'APPROVED' } });
    const headers = signed(body);
    const first = await deliver(stack.bridge, body, headers);
    const replay = await deliver(replica, body, headers);
    expect(first.status).toBe(200);
    expect(replay.status).toBe(200);
    expect(first.body.eventId).toMatch(/^evt_[0-9a-f]{40}$/);
    expect(replay.body.eventId).toBe(first.body.eventId);
    expect(await entityState('kyc_replicas_2')).toMatchObject({ eventCount: 1, status: 'APPROVED' });
  });

  test('the same event at both replicas at once is still applied once', async () => {
    const body = JSON.stringify({ eventId: 'evt_replica_3', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id: 'kyc_replicas_3', kycStatus: 'REJECTED', reason: 'blurred' } });
    const headers = signed(body);
    const answers = await Promise.all([deliver(stack.bridge, body, headers), deliver(replica, body, headers), deliver(stack.bridge, body, signed(body)), deliver(replica, body, signed(body))]);
    for (const a of answers) expect(a.status).toBe(200);
    expect(await entityState('kyc_replicas_3')).toMatchObject({ eventCount: 1, status: 'REJECTED' });
  });
});
