import { HmacSha256Scheme } from '../../src/provider/signing';
import { entityWorkflowId } from '../../src/shared/ids';
import { entityStateQuery } from '../../src/shared/messages';
import { issueTestCard } from '../helpers/flows';
import { deliveries } from '../helpers/wait';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';

describe('webhook-to-signal bridge', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const send = async (body: string | Buffer, opts: { secret?: string; timestamp?: number; path?: string; apiKey?: string | null } = {}) => {
    const path = opts.path ?? '/webhooks/provider';
    const signer = new HmacSha256Scheme({
      apiKey: opts.apiKey ?? stack.config.provider.apiKey,
      secret: opts.secret ?? stack.config.provider.webhookSecret,
      now: opts.timestamp === undefined ? undefined : () => opts.timestamp!,
    });
    const { 'x-api-key': apiKey, ...signature } = signer.sign({ method: 'POST', pathWithQuery: path, body });
    const headers: Record<string, string> = { ...signature, ...(opts.apiKey === null ? {} : { 'x-api-key': apiKey }), 'content-type': 'application/json' };
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

  test('a forged signature, a stale timestamp, the X-API-Key of another project and missing headers get 401 and signal nothing', async () => {
    stack = await startStack();
    const forged = await send(kycEvent('kyc_forged'), { secret: 'secret_wrong' });
    expect(forged.status).toBe(401);
    const stale = await send(kycEvent('kyc_stale'), { timestamp: Date.now() - 6 * 60 * 1000 });
    expect(stale.status).toBe(401);
    const otherKey = await send(kycEvent('kyc_other_key'), { apiKey: 'key_someone_else' });
    expect(otherKey).toMatchObject({ status: 401, body: { reason: 'WRONG_API_KEY' } });
    const body = kycEvent('kyc_unsigned');
    const missing = await fetch(`${stack.bridge.url}/webhooks/provider`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(missing.status).toBe(401);
    for (const id of ['kyc_forged', 'kyc_stale', 'kyc_other_key', 'kyc_unsigned']) expect(await workflowExists(entityWorkflowId('kyc', id))).toBe(false);
  });

  test('a signed event without X-API-Key, eventId and createdAt is delivered once; the same bytes again are answered but not applied', async () => {
    stack = await startStack();
    const body = JSON.stringify({ eventType: 'CARDHOLDER_KYC_STATUS', data: { id: 'kyc_bare', kycStatus: 'APPROVED' } });
    const first = await send(body, { apiKey: null });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ eventId: expect.stringMatching(/^evt_[0-9a-f]{40}$/) });
    // The provider repeats the first delivery's bytes and headers exactly.
    const replay = await fetch(`${stack.bridge.url}/webhooks/provider`, { method: 'POST', headers: first.headers, body });
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ duplicate: true });
    // Or re-signs the same content with a fresh nonce: the derived eventId is the same, so the entity applies it once.
    const resigned = await send(body, { apiKey: null });
    expect(resigned.body).toMatchObject({ eventId: (first.body as unknown as { eventId: string }).eventId });
    const state = await stack.client.workflow.getHandle(entityWorkflowId('kyc', 'kyc_bare')).query(entityStateQuery);
    expect(state).toMatchObject({ eventCount: 1, status: 'APPROVED' });
  });

  test('malformed and oversized bodies are refused; fields the spec does not show are read tolerantly; the bridge never crashes', async () => {
    stack = await startStack();
    expect((await send('{"eventId": ')).status).toBe(400);
    expect((await send('[]')).status).toBe(400);
    const noData = await send(JSON.stringify({ eventType: 'CARDHOLDER_KYC_STATUS' }));
    expect(noData).toMatchObject({ status: 400, body: { errors: { data: expect.any(String) } } });
    // A createdAt we cannot read is dropped (the receipt time stands in); an id that is not a string is not routable: recorded, not lost.
    const wrongType = await send(JSON.stringify({ eventId: 'evt_1', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: 'yesterday', data: { id: 5 } }));
    expect(wrongType.status).toBe(200);
    expect(await workflowExists(entityWorkflowId('unrouted', 'CARDHOLDER_KYC_STATUS'))).toBe(true);
    // A status we do not know is kept for the flow to judge (not final), not refused.
    const newStatus = await send(JSON.stringify({ eventId: 'evt_2', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id: 'kyc_x', kycStatus: 'IN_REVIEW' } }));
    expect(newStatus.status).toBe(200);
    const held = await stack.client.workflow.getHandle(entityWorkflowId('kyc', 'kyc_x')).query(entityStateQuery);
    expect(held.status).toBe('IN_REVIEW');
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

