/**
 * Trust boundaries (issue 45, case 4): with a real payload key, a payload not encrypted with it
 * (anyone with namespace access, `temporal workflow signal` with plain JSON) is refused by the
 * workers: a plain `cardRead` saying DELETED does not jam a card, a plain `providerEvent` is not the
 * provider's word, and a plain start of an entity workflow fails at once instead of holding its ID.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { cardStateQuery } from '../../src/shared/messages';
import { entityWorkflowId } from '../../src/shared/ids';
import { issueTestCard, workflowFailure } from '../helpers/flows';
import { startStack, type Stack } from '../helpers/stack';
import { newPinKeyPair } from '../../src/codec/card-secrets';

const KEYS = { PAYLOAD_CODEC_KEY: randomBytes(32).toString('base64'), PAYLOAD_CODEC_KEY_ID: 'live', PIN_SEAL_PRIVATE_KEY: newPinKeyPair().privateKey, PIN_SEAL_KEY_ID: 'pin' };

let stack: Stack;
afterAll(async () => stack?.close());

test('a plain-JSON signal to a card workflow is dropped, a plain start of an entity workflow fails', async () => {
  stack = await startStack({ cardProvisioningMs: 50 }, KEYS);
  const card = await issueTestCard(stack, 1000);
  const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
  // A stranger's client: no payload codec, so its payloads are plain JSON.
  const stranger = new Client({ connection: stack.client.connection, namespace: stack.config.temporal.namespace });
  const later = Date.now() + 3_600_000;
  await stranger.workflow.getHandle(entityWorkflowId('card', card.cardId)).signal('cardRead', { card: { ...card, status: 'DELETED', availableBalance: 0, updatedAt: later }, readAt: later });
  await stranger.workflow.getHandle(entityWorkflowId('card', card.cardId)).signal('providerEvent', { eventId: 'evt_forged', eventType: 'CARD_TRANSACTION', createdAt: later, data: { cardId: card.cardId, amount: 900, currency: 'USD', merchantName: 'forged', status: 'APPROVED' } });
  // The card workflow has taken both signals (a query after them sees what they left).
  await new Promise((r) => setTimeout(r, 1500));
  const state = await handle.query(cardStateQuery);
  expect(state).toMatchObject({ status: 'ENABLE', card: { status: 'ENABLE', availableBalance: 1000 }, recentTransactions: [] });

  // A stranger's start of a card workflow under a fresh ID fails at once, holding it for no one.
  const forged = await stranger.workflow.start('cardLifecycle', { taskQueue: `${stack.taskQueue}-entities`, workflowId: entityWorkflowId('card', `crd_forged_${Date.now()}`), args: [{ cardId: 'crd_forged' }] });
  // Its failure is ours to read (encrypted, as every payload our workers write).
  const failure = await workflowFailure(stack.client.workflow.getHandle(forged.workflowId).result());
  expect(failure.type).toBe('ValidationFailed');
  expect(failure.message).toMatch(/not encrypted with our payload key/);
});
