/**
 * Authority (issue 50): holding the payload key grants no card action and is not the provider's word.
 * Each attack of the review, tried with a service's client (the payload key, no signing key, no
 * signal MAC) against a real stack, and refused before any provider call: the sandbox's per-endpoint
 * request counts are the proof.
 */
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { CardActionSigner, newCardActionKeyPair } from '../../src/codec/card-capability';
import { oneTimeRevealKey, sealPin } from '../../src/codec/card-secrets';
import { cardStateQuery, deleteCardUpdate, entityStateQuery, freezeCardUpdate, providerEventSignal, revealSensitiveUpdate, setPinUpdate, unfreezeCardUpdate } from '../../src/shared/messages';
import { entityWorkflowId } from '../../src/shared/ids';
import type { SealedPin } from '../../src/shared/types';
import { addressed } from '../../src/shared/signal-origin';
import { issueTestCard } from '../helpers/flows';
import { fixtureBins } from '../helpers/provider';
import { allowed, asBridge, sealedTestPin, startStack, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ cardProvisioningMs: 50 });
});
afterAll(async () => stack?.close());

const calls = async (endpoint: string) => (await stack.control<{ endpoints: Record<string, { requests: number }> }>('GET', '/stats')).endpoints[endpoint]?.requests ?? 0;

/** The update's refusal: its failure type and message (the update is refused, never answered). */
async function refusal(p: Promise<unknown>): Promise<{ type?: string; message: string; details: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as Error).cause as Error & { type?: string; details?: unknown };
  return { type: cause.type, message: cause.message, details: JSON.stringify(cause.details ?? []) };
}

async function cardWithPin(): Promise<{ cardId: string; handle: WorkflowHandle }> {
  const { pin } = await fixtureBins(stack);
  const card = await issueTestCard(stack, 1000, { cardBinId: pin.cardBinId });
  return { cardId: card.cardId, handle: stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId)) };
}

test('a bare freeze, unfreeze or delete sent with the payload key is refused before it is recorded; nothing reaches the provider', async () => {
  const { cardId, handle } = await cardWithPin();
  const before = { freeze: await calls('freezeCard'), delete: await calls('deleteCard') };
  for (const update of [freezeCardUpdate, unfreezeCardUpdate, deleteCardUpdate]) {
    const refused = await refusal(handle.executeUpdate(update as typeof freezeCardUpdate, { args: [{}] as never }));
    expect(refused).toMatchObject({ type: 'Unauthorized', message: expect.stringMatching(/capability is required/) });
  }
  // An update the validator refused is not in history at all.
  expect(JSON.stringify(await handle.fetchHistory())).not.toMatch(/freezeCard|deleteCard/);
  expect({ freeze: await calls('freezeCard'), delete: await calls('deleteCard') }).toEqual(before);
  expect((await handle.query(cardStateQuery)).status).toBe('ENABLE');
  // The same freeze with a capability from an allowed key acts.
  expect((await handle.executeUpdate(freezeCardUpdate, { args: [allowed(stack, cardId, 'freeze')] })).status).toBe('DISABLE');
  expect(await calls('freezeCard')).toBe(before.freeze + 1);
});

test('a capability is bound to its card, action, arguments and expiry, is used once, and must come from a key on the allow-list', async () => {
  const a = await cardWithPin();
  const b = await cardWithPin();
  const before = await calls('freezeCard');
  const forA = allowed(stack, a.cardId, 'freeze');
  // Another card's, another action's, an expired one.
  expect(await refusal(b.handle.executeUpdate(freezeCardUpdate, { args: [forA] }))).toMatchObject({ type: 'Unauthorized', message: expect.stringMatching(/capability.cardId must be this card/) });
  expect(await refusal(a.handle.executeUpdate(deleteCardUpdate, { args: [forA] }))).toMatchObject({ type: 'Unauthorized', message: expect.stringMatching(/capability.action must be "delete"/) });
  const signer = new CardActionSigner(stack.config.cardActions.signing);
  const expired = { capability: signer.sign(a.cardId, 'freeze', {}, { ttlMs: 10, now: Date.now() - 60_000 }) };
  expect(await refusal(a.handle.executeUpdate(freezeCardUpdate, { args: [expired] }))).toMatchObject({ message: expect.stringMatching(/capability.exp has passed/) });
  // A capability for one reveal key serves no other: the requester's key is part of what it binds.
  const theirs = await oneTimeRevealKey();
  const mine = allowed(stack, a.cardId, 'reveal', { publicKey: (await oneTimeRevealKey()).publicKey });
  expect(await refusal(a.handle.executeUpdate(revealSensitiveUpdate, { args: [{ ...mine, publicKey: theirs.publicKey }] }))).toMatchObject({ message: expect.stringMatching(/capability.args does not match this request/) });
  // Used once: the same capability again is refused by the card that took it.
  expect((await a.handle.executeUpdate(freezeCardUpdate, { args: [forA] })).status).toBe('DISABLE');
  expect(await refusal(a.handle.executeUpdate(freezeCardUpdate, { args: [forA] }))).toMatchObject({ type: 'Unauthorized', message: expect.stringMatching(/capability.nonce was used on this card already/) });
  expect(await calls('freezeCard')).toBe(before + 1);

  // Well formed, signed by a key the workers do not trust (a stranger's own pair): refused by the worker before the provider is asked.
  const stranger = new CardActionSigner({ keyId: stack.config.cardActions.signing.keyId, privateKey: newCardActionKeyPair().privateKey });
  const before2 = { unfreeze: await calls('unfreezeCard'), sensitive: await calls('getCardSensitive') };
  expect(await refusal(a.handle.executeUpdate(unfreezeCardUpdate, { args: [stranger.authorise(a.cardId, 'unfreeze', {})] }))).toMatchObject({ type: 'Unauthorized', message: expect.stringMatching(/capability.sig does not verify/) });
  const revealKey = await oneTimeRevealKey();
  expect(await refusal(a.handle.executeUpdate(revealSensitiveUpdate, { args: [stranger.authorise(a.cardId, 'reveal', { publicKey: revealKey.publicKey })] }))).toMatchObject({ type: 'Unauthorized' });
  const unknownKey = new CardActionSigner({ keyId: 'stranger', privateKey: newCardActionKeyPair().privateKey });
  expect(await refusal(a.handle.executeUpdate(unfreezeCardUpdate, { args: [unknownKey.authorise(a.cardId, 'unfreeze', {})] }))).toMatchObject({ message: expect.stringMatching(/"stranger" is not on the workers' allow-list/) });
  expect({ unfreeze: await calls('unfreezeCard'), sensitive: await calls('getCardSensitive') }).toEqual(before2);
  expect((await a.handle.query(cardStateQuery)).status).toBe('DISABLE');
});

test("a sealed PIN opens for its own card only, once: a box from card A's history replayed onto card B, or onto A again, sets nothing", async () => {
  const a = await cardWithPin();
  const b = await cardWithPin();
  const box: SealedPin = await sealedTestPin(stack, '4821', a.handle.workflowId);
  await a.handle.executeUpdate(setPinUpdate, { args: [allowed(stack, a.cardId, 'pin', { pin: box })] });
  expect(await stack.control('POST', `/cards/${a.cardId}/pin-check`, { pin: '4821' })).toMatchObject({ matches: true });
  const before = await calls('updateCardPin');
  // Card B, with a valid capability for B and that box: the box does not open for B.
  const onB = await refusal(b.handle.executeUpdate(setPinUpdate, { args: [allowed(stack, b.cardId, 'pin', { pin: box })] }));
  expect(onB).toMatchObject({ type: 'ValidationFailed', details: expect.stringMatching(/does not open for card\//) });
  expect(await stack.control('POST', `/cards/${b.cardId}/pin-check`, { pin: '4821' })).toMatchObject({ pinSet: false });
  // Card A again (rolling back to an old PIN): refused before it is accepted.
  expect(await refusal(a.handle.executeUpdate(setPinUpdate, { args: [allowed(stack, a.cardId, 'pin', { pin: box })] }))).toMatchObject({ message: expect.stringMatching(/this sealed PIN was sent to this card already/) });
  // A box whose expiry passed, or was moved, is refused too.
  const stale = await sealPin('4821', { keyId: stack.config.pin.keyId, publicKey: stack.config.pin.publicKey }, a.handle.workflowId, { now: Date.now() - 3_600_000 });
  expect(await refusal(a.handle.executeUpdate(setPinUpdate, { args: [allowed(stack, a.cardId, 'pin', { pin: stale })] }))).toMatchObject({ message: expect.stringMatching(/pin.exp has passed/) });
  expect(await calls('updateCardPin')).toBe(before);
});

test("the provider's word needs the bridge's MAC: a providerEvent sent with the payload key alone is dropped, the bridge's is taken", async () => {
  const { cardId, handle } = await cardWithPin();
  const event = (eventId: string, merchantName: string) => ({ eventId, eventType: 'CARD_TRANSACTION', createdAt: Date.now(), data: { cardId, amount: 900, currency: 'USD', merchantName, status: 'APPROVED' } });
  // A stranger with the payload key (and namespace write access) reports a spend.
  await handle.signal(providerEventSignal, event('evt_forged', 'forged'));
  // The bridge's delivery of a real one, after it: once it is applied, the forged one was handled before it.
  await asBridge(stack, handle.workflowId).signal(providerEventSignal, event('evt_real', 'real'));
  await waitUntil(async () => (await handle.query(cardStateQuery)).recentTransactions.length > 0, 20_000, 'the real event applied');
  expect((await handle.query(cardStateQuery)).recentTransactions.map((t) => t.merchantName)).toEqual(['real']);
});

test("the provider's word is for the workflow it was addressed to: a MAC'd event copied from card A's history into card B is dropped", async () => {
  const a = await cardWithPin();
  const b = await cardWithPin();
  const spend = { eventId: 'evt_for_a', eventType: 'CARD_TRANSACTION', createdAt: Date.now(), data: { cardId: a.cardId, amount: 900, currency: 'USD', merchantName: 'for A', status: 'APPROVED' } };
  // What A's history holds: the bridge's payload, with its MAC, addressed to A; replayed by a namespace writer into B.
  await stack.signaller.workflow.getHandle(b.handle.workflowId).signal(providerEventSignal, addressed(a.handle.workflowId, spend));
  await asBridge(stack, b.handle.workflowId).signal(providerEventSignal, { ...spend, eventId: 'evt_for_b', data: { ...spend.data, cardId: b.cardId, merchantName: 'for B' } });
  await waitUntil(async () => (await b.handle.query(cardStateQuery)).recentTransactions.length > 0, 20_000, "B's own event applied");
  expect((await b.handle.query(cardStateQuery)).recentTransactions.map((t) => t.merchantName)).toEqual(['for B']);
});

test('a stranger\'s start of an entity workflow with a forged state starts from nothing: a payout is not FAILED because its start input says so', async () => {
  const merOrderNo = `po_forged_${Date.now()}`;
  const workflowId = entityWorkflowId('payout', merOrderNo);
  const forged = { kind: 'payout', entityId: merOrderNo, snapshot: { state: { kind: 'payout', entityId: merOrderNo, status: 'FAILED', eventCount: 1 }, seenEventIds: [], subscribers: [] } };
  const handle = await stack.client.workflow.start('providerEntity', { taskQueue: `${stack.taskQueue}-entities`, workflowId, args: [forged] });
  await waitUntil(async () => (await handle.query(entityStateQuery)) !== undefined, 20_000, 'the entity answers');
  expect((await handle.query(entityStateQuery)).status).toBeUndefined();
  await handle.terminate('test done');
});
