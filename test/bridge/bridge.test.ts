import { entityWorkflowId } from '../../src/shared/ids';
import { entityStateQuery } from '../../src/shared/messages';
import { issueTestCard } from '../helpers/flows';
import { deliveries } from '../helpers/wait';
import { signWebhook } from '../helpers/webhooks';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';

describe('webhook-to-signal bridge', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const send = async (body: string | Buffer, opts: { withoutApiKey?: boolean } = {}) => {
    const headers = signWebhook(body, stack.config.provider, opts);
    const res = await fetch(`${stack.bridge.url}/webhooks/provider`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as { eventId: string } | undefined, headers };
  };
  const kycEvent = (id: string, eventId = `evt_${id}`) =>
    JSON.stringify({ eventId, eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id, kycStatus: 'APPROVED' } });
  const workflowExists = async (workflowId: string) =>
    stack.client.workflow
      .getHandle(workflowId)
      .describe()
      .then(() => true, () => false);

  test('a signed event without X-API-Key, eventId and createdAt is delivered once; the same bytes again are answered but not applied', async () => {
    stack = await startStack();
    const body = JSON.stringify({ eventType: 'CARDHOLDER_KYC_STATUS', data: { id: 'kyc_bare', kycStatus: 'APPROVED' } });
    const first = await send(body, { withoutApiKey: true });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ eventId: expect.stringMatching(/^evt_[0-9a-f]{40}$/) });
    // The provider repeats the first delivery's bytes and headers exactly.
    const replay = await fetch(`${stack.bridge.url}/webhooks/provider`, { method: 'POST', headers: first.headers, body });
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ duplicate: true });
    // Or re-signs the same content with a fresh nonce: the derived eventId is the same, so the entity applies it once.
    const resigned = await send(body, { withoutApiKey: true });
    expect(resigned.body).toMatchObject({ eventId: first.body!.eventId });
    const state = await stack.client.workflow.getHandle(entityWorkflowId('kyc', 'kyc_bare')).query(entityStateQuery);
    expect(state).toMatchObject({ eventCount: 1, status: 'APPROVED' });
  });

  // Refusals (signature, timestamp, API key, nonce, malformed and oversized bodies) are in refusals.test.ts, without Temporal.
  test('fields the spec does not show are read tolerantly: an unroutable or unknown event is recorded, not lost; a forged one is refused', async () => {
    stack = await startStack();
    // A createdAt we cannot read is dropped (the receipt time stands in); an id that is not a string is not routable: recorded, not lost.
    const wrongType = await send(JSON.stringify({ eventId: 'evt_1', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: 'yesterday', data: { id: 5 } }));
    expect(wrongType.status).toBe(200);
    expect(await workflowExists(entityWorkflowId('unrouted', 'CARDHOLDER_KYC_STATUS'))).toBe(true);
    // A status we do not know is kept for the flow to judge (not final), not refused.
    const newStatus = await send(JSON.stringify({ eventId: 'evt_2', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id: 'kyc_x', kycStatus: 'IN_REVIEW' } }));
    expect(newStatus.status).toBe(200);
    const held = await stack.client.workflow.getHandle(entityWorkflowId('kyc', 'kyc_x')).query(entityStateQuery);
    expect(held.status).toBe('IN_REVIEW');
    // An unknown event type is accepted and recorded, not dropped.
    const unknown = await send(JSON.stringify({ eventId: 'evt_new_kind', eventType: 'CARD_REISSUED', createdAt: Date.now(), data: { cardId: 'crd_1' } }));
    expect(unknown.status).toBe(200);
    const recorded = await stack.client.workflow.getHandle(entityWorkflowId('unrouted', 'CARD_REISSUED')).query(entityStateQuery);
    expect(recorded.eventCount).toBe(1);
    // The running bridge verifies with PROVIDER_WEBHOOK_SECRET (every refusal itself: refusals.test.ts).
    const forgedBody = kycEvent('kyc_forged');
    const forged = await fetch(`${stack.bridge.url}/webhooks/provider`, {
      method: 'POST',
      headers: signWebhook(forgedBody, { ...stack.config.provider, webhookSecret: 'secret_wrong' }),
      body: forgedBody,
    });
    expect(forged.status).toBe(401);
    expect(await workflowExists(entityWorkflowId('kyc', 'kyc_forged'))).toBe(false);
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

