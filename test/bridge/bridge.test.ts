import { HmacSha256Scheme } from '../../src/provider/signing';
import { entityWorkflowId } from '../../src/shared/ids';
import { entityStateQuery } from '../../src/shared/messages';
import { issueTestCard } from '../helpers/flows';
import { deliveries } from '../helpers/wait';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';

describe('webhook-to-signal bridge', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const send = async (body: string | Buffer, opts: { secret?: string; timestamp?: number; path?: string } = {}) => {
    const path = opts.path ?? '/webhooks/provider';
    const signer = new HmacSha256Scheme({
      apiKey: stack.config.provider.apiKey,
      secret: opts.secret ?? stack.config.provider.webhookSecret,
      now: opts.timestamp === undefined ? undefined : () => opts.timestamp!,
    });
    const headers: Record<string, string> = { ...signer.sign({ method: 'POST', pathWithQuery: path, body }), 'content-type': 'application/json' };
    const res = await fetch(`${stack.bridge.url}${path}`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as { errors: Record<string, string> } | undefined, headers };
  };
  const kycEvent = (id: string, eventId = `evt_${id}`) =>
    JSON.stringify({ eventId, eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id, kycStatus: 'APPROVED' } });
  const workflowExists = async (workflowId: string) =>
    stack.client.workflow
      .getHandle(workflowId)
      .describe()
      .then(() => true, () => false);

  test('a forged signature, a stale timestamp and a replayed nonce get 401 and signal nothing', async () => {
    stack = await startStack();
    const forged = await send(kycEvent('kyc_forged'), { secret: 'secret_wrong' });
    expect(forged.status).toBe(401);
    const stale = await send(kycEvent('kyc_stale'), { timestamp: Date.now() - 6 * 60 * 1000 });
    expect(stale.status).toBe(401);
    const body = kycEvent('kyc_replayed');
    const first = await send(body);
    expect(first.status).toBe(200);
    const replay = await fetch(`${stack.bridge.url}/webhooks/provider`, { method: 'POST', headers: first.headers, body });
    expect(replay.status).toBe(401);
    const missing = await fetch(`${stack.bridge.url}/webhooks/provider`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(missing.status).toBe(401);
    expect(await workflowExists(entityWorkflowId('kyc', 'kyc_forged'))).toBe(false);
    expect(await workflowExists(entityWorkflowId('kyc', 'kyc_stale'))).toBe(false);
    const replayed = await stack.client.workflow.getHandle(entityWorkflowId('kyc', 'kyc_replayed')).query(entityStateQuery);
    expect(replayed.eventCount).toBe(1);
  });

  test('malformed, oversized and wrongly typed bodies are refused and never crash the bridge', async () => {
    stack = await startStack();
    expect((await send('{"eventId": ')).status).toBe(400);
    expect((await send('[]')).status).toBe(400);
    const wrongType = await send(JSON.stringify({ eventId: 'evt_1', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: 'yesterday', data: { id: 5 } }));
    expect(wrongType.status).toBe(400);
    expect(Object.keys(wrongType.body!.errors)).toEqual(expect.arrayContaining(['createdAt']));
    const badData = await send(JSON.stringify({ eventId: 'evt_2', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id: 'kyc_x', kycStatus: 'MAYBE' } }));
    expect(badData.status).toBe(400);
    expect(badData.body!.errors).toHaveProperty(['data.kycStatus']);
    const huge = await send(JSON.stringify({ eventId: 'evt_3', eventType: 'X', createdAt: 1, data: { pad: 'x'.repeat(400_000) } }));
    expect(huge.status).toBe(413);
    // An unknown event type is accepted and recorded, not dropped.
    const unknown = await send(JSON.stringify({ eventId: 'evt_new_kind', eventType: 'CARD_REISSUED', createdAt: Date.now(), data: { cardId: 'crd_1' } }));
    expect(unknown.status).toBe(200);
    const recorded = await stack.client.workflow.getHandle(entityWorkflowId('unrouted', 'CARD_REISSUED')).query(entityStateQuery);
    expect(recorded.eventCount).toBe(1);
    // Still serving.
    expect((await send(kycEvent('kyc_after'))).status).toBe(200);
    expect((await fetch(`${stack.bridge.url}/health`)).status).toBe(200);
  });

  test('CARD_CREATED beats the issuing flow (provisioning 0 ms) and the flow still completes', async () => {
    stack = await startStack({ cardProvisioningMs: 0 });
    const card = await issueTestCard(stack, 800, { timings: { ...FAST_TIMINGS, webhookWaitMs: 60_000 } });
    expect(card.status).toBe('ENABLE');
    const log = await deliveries(stack.control);
    expect(log.find((d) => d.eventType === 'CARD_CREATED')?.status).toBe('DELIVERED');
  });

  test('with every webhook duplicated and reordered, each flow ends right and each event is applied once', async () => {
    stack = await startStack({ cardProvisioningMs: 100, webhook: { duplicateRate: 1, reorder: true } });
    const cards = await Promise.all([1, 2, 3].map((n) => issueTestCard(stack, 100 * n + 100, { timings: { ...FAST_TIMINGS, webhookWaitMs: 60_000 } })));
    for (const card of cards) {
      expect(card.status).toBe('ENABLE');
      const state = await stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId)).query(entityStateQuery);
      expect(state.eventCount).toBe(1);
    }
    const created = (await deliveries(stack.control)).filter((d) => d.eventType === 'CARD_CREATED');
    expect(created).toHaveLength(3);
    for (const d of created) expect(d.copies).toBe(2);
  });
});

