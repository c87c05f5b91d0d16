/**
 * Rotating every key without losing a flow (issue 31, issue 40; docs/operations.md, "Rotating
 * keys" and "PIN keys"): flows started under payload key A and PIN key pair P1 (a card workflow
 * with money moved and a reveal, an onboarding parked on its review) go on after everything
 * restarts with B and P2 current and A and P1 retired. Their histories, written under both payload
 * keys, decode through the codec endpoint; the reveal still opens for its requester alone; a PIN
 * sealed to P1 before the rotation is set after it. Once P1's private key is deleted, nothing in
 * history opens to that PIN. Real Temporal dev server, sandbox over HTTP, codec endpoint over HTTP.
 */
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { loadConfig, type Config } from '../../src/config';
import { startBridge, type RunningBridge } from '../../src/bridge';
import { startCodecServer, type CodecServer } from '../../src/codec/codec-server';
import { createDataConverter, createPayloadCodec, ENCRYPTED_ENCODING, METADATA_KEY_ID } from '../../src/codec/payload-codec';
import { newPinKeyPair, oneTimeRevealKey, PinOpener, sealPin } from '../../src/codec/card-secrets';
import { createWorkers, type WorkerFleet } from '../../src/fleet/workers';
import { clientConnectionOptions } from '../../src/temporal/connection';
import { sampleFolder, sampleKycForm, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { entityWorkflowId } from '../../src/shared/ids';
import { onboardingQuery, revealSensitiveUpdate, setPinUpdate } from '../../src/shared/messages';
import type { SealedPin, SealedReveal } from '../../src/shared/types';
import { createCardIssuingClient } from '../../src/starter/connect';
import { issueTestCard } from '../helpers/flows';
import { fixtureBins } from '../helpers/provider';
import { decodeThrough, payloadsOf, sealedBoxes, standaloneDigits } from '../helpers/history';
import { FAST_TIMINGS, allowed, startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

type Payload = temporal.api.common.v1.IPayload;

const key = () => randomBytes(32).toString('base64');
const A = key();
const B = key();
const P1 = newPinKeyPair();
const P2 = newPinKeyPair();
const OLD_PIN = '4821';
const NEW_PIN = '7395';

describe('key rotation without losing a flow', () => {
  let stack: Stack;
  let dir: string;
  const stoppers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The workers of `config` on the stack's queue (the stack's own stopped first); stopped by the returned function. */
  async function restartWorkers(config: Config): Promise<() => Promise<void>> {
    const fleet: WorkerFleet = await createWorkers({ config, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, enforceRateBudget: false });
    const running = fleet.run();
    const stop = async () => {
      fleet.shutdown();
      await running;
    };
    stoppers.push(stop);
    return stop;
  }

  test('flows started under A and P1 complete after a restart with B and P2 current and A and P1 retired; histories decode; a PIN sealed to P1 is set after it; once P1 is deleted nothing opens to that PIN', async () => {
    dir = sampleFolder();
    // --- under A and P1 -------------------------------------------------------------------
    stack = await startStack({ cardProvisioningMs: 50, kycReviewMs: 3_600_000 }, { PAYLOAD_CODEC_KEY: A, PAYLOAD_CODEC_KEY_ID: 'a', PIN_SEAL_PRIVATE_KEY: P1.privateKey, PIN_SEAL_KEY_ID: 'p1' });
    const before = await createCardIssuingClient(stack.config);
    const { pin: pinBin } = await fixtureBins(stack);
    const card = await issueTestCard(stack, 1000, { cardBinId: pinBin.cardBinId });
    await before.fundCard({ cardId: card.cardId, amount: 250, idempotencyKey: uniqueId('fund-a'), timings: FAST_TIMINGS });
    const cardHandle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    const requester = await oneTimeRevealKey();
    await cardHandle.executeUpdate(revealSensitiveUpdate, { updateId: 'reveal-under-a', args: [allowed(stack, card.cardId, 'reveal', { publicKey: requester.publicKey })] });
    // A caller holding P1's public key seals a PIN before the rotation; it is sent after.
    const sealedBefore = await sealPin(OLD_PIN, { keyId: 'p1', publicKey: P1.publicKey }, cardHandle.workflowId);
    const onboardingId = uniqueId('onboard');
    const onboarding = await stack.client.workflow.start('onboardCardholder', {
      taskQueue: stack.taskQueue,
      workflowId: onboardingId,
      args: [sampleKycForm(writeSampleDocuments(dir).documents, { timings: FAST_TIMINGS })],
    });
    let cardholderId: string | undefined;
    await waitUntil(async () => Boolean((cardholderId = (await onboarding.query(onboardingQuery)).cardholderId)), 60_000, 'the onboarding to submit and park on its review');
    await before.close();

    // --- everything stops, and starts again with B and P2 current, A and P1 retired -------------
    await stack.stopWorkers();
    await stack.bridge.close();
    const rotatedEnv = { PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_KEY_ID: 'b', PAYLOAD_CODEC_PREVIOUS_KEYS: `a:${A}`, PIN_SEAL_PRIVATE_KEY: P2.privateKey, PIN_SEAL_KEY_ID: 'p2', PROVIDER_TIMEOUT_MS: '5000' };
    const configOf = (env: Record<string, string>): Config => ({ ...loadConfig(env), temporal: stack.config.temporal, provider: stack.config.provider });
    const rotated = configOf({ ...rotatedEnv, PIN_SEAL_PREVIOUS_KEYS: `p1:${P1.privateKey}` });
    const stopRotated = await restartWorkers(rotated);
    const bridge: RunningBridge = await startBridge(rotated, { port: 0 });
    stoppers.push(() => bridge.close());
    await stack.control('PUT', '/config', { webhookUrl: `${bridge.url}/webhooks/provider` });
    // The codec endpoint as deployed: payload keys only (no PIN key in its environment).
    const codecConfig = loadConfig({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_KEY_ID: 'b', PAYLOAD_CODEC_PREVIOUS_KEYS: `a:${A}` });
    const codec: CodecServer = await startCodecServer({ port: 0, codec: createPayloadCodec(codecConfig.codec) });
    stoppers.push(() => codec.close());
    const after = await createCardIssuingClient(rotated);
    stoppers.push(() => after.close());

    // The card workflow, opened by a worker that never saw it: replays A's payloads, moves money under B.
    await after.fundCard({ cardId: card.cardId, amount: 100, idempotencyKey: uniqueId('fund-b'), timings: FAST_TIMINGS });
    const ledger = await stack.control<{ cards: Array<{ cardId: string; availableBalance: number }>; violations: unknown[] }>('GET', '/ledger');
    expect(ledger.cards.find((c) => c.cardId === card.cardId)?.availableBalance).toBe(1000 + 250 + 100);
    expect(ledger.violations).toEqual([]);
    // The parked onboarding ends on the decision made now.
    await stack.control('POST', `/kyc/${cardholderId}/decision`, { kycStatus: 'APPROVED' });
    expect(await (await connectRotated(rotated)).workflow.getHandle(onboardingId).result()).toMatchObject({ kycStatus: 'APPROVED' });

    // The PIN sealed to P1 before the rotation is set after it (P1 retired, still held).
    const rotatedCard = (await connectRotated(rotated)).workflow.getHandle(entityWorkflowId('card', card.cardId));
    await rotatedCard.executeUpdate(setPinUpdate, { args: [allowed(stack, card.cardId, 'pin', { pin: sealedBefore })] });
    expect(await stack.control('POST', `/cards/${card.cardId}/pin-check`, { pin: OLD_PIN })).toMatchObject({ matches: true });

    // Both histories hold payloads under A and under B; the codec endpoint decodes every one.
    for (const workflowId of [entityWorkflowId('card', card.cardId), onboardingId]) {
      const payloads = encryptedPayloads(await stack.client.workflow.getHandle(workflowId).fetchHistory());
      expect(new Set(payloads.map(keyIdOf))).toEqual(new Set(['a', 'b']));
      const decoded = await decodeThrough(codec, payloads);
      expect(decoded.some((p) => keyIdOf(p) !== undefined)).toBe(false);
    }

    // The reveal made under A, read back from history, opens for its requester alone.
    const readBack = await rotatedCard.getUpdateHandle<SealedReveal>('reveal-under-a').result();
    const number = (await requester.open(readBack, card.cardId)).cardNumber;
    expect(number.slice(-4)).toBe(card.cardNumber.slice(-4));
    await expect((await oneTimeRevealKey()).open(readBack, card.cardId)).rejects.toThrow();
    expect((await after.revealSensitive(card.cardId)).cardNumber).toBe(number);

    // --- P1's private key is deleted: the workers hold P2 alone ---------------------------
    await stopRotated();
    const withoutP1 = configOf(rotatedEnv);
    await restartWorkers(withoutP1);
    // A box is accepted once per card: the caller still holding P1's public key seals the PIN again.
    const sealedAgain = await sealPin(OLD_PIN, { keyId: 'p1', publicKey: P1.publicKey }, cardHandle.workflowId);
    const failure = await rotatedCard.executeUpdate(setPinUpdate, { args: [allowed(stack, card.cardId, 'pin', { pin: sealedAgain })] }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(JSON.stringify(((failure as Error).cause as { details?: unknown } | undefined)?.details)).toMatch(/PIN key id \\"p1\\", which the workers do not hold/);
    // A PIN from a caller holding P2's public key goes on being set.
    await after.setPin(card.cardId, NEW_PIN);
    expect(await stack.control('POST', `/cards/${card.cardId}/pin-check`, { pin: NEW_PIN })).toMatchObject({ matches: true });

    // Every box in history, decoded with every payload key: the P1 boxes open with nothing left; none of it reads as the old PIN.
    const payloads = encryptedPayloads(await stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId)).fetchHistory());
    const decoded = await decodeThrough(codec, payloads);
    const boxes = sealedBoxes(decoded).filter((b): b is SealedPin => 'keyId' in b);
    expect(new Set(boxes.map((b) => b.keyId))).toEqual(new Set(['p1', 'p2']));
    const remaining = new PinOpener({ keyId: 'p2', privateKey: withoutP1.pin.privateKey! });
    const opened = await Promise.all(boxes.map((b) => remaining.open(b, cardHandle.workflowId).catch(() => undefined)));
    expect(new Set(opened.filter((pin) => pin !== undefined))).toEqual(new Set([NEW_PIN]));
    // Before the deletion P1 opened them: the assertion above is about the key, not a box that never held the PIN.
    expect(await new PinOpener({ keyId: 'p1', privateKey: P1.privateKey }).open(boxes.find((b) => b.keyId === 'p1')!, cardHandle.workflowId)).toBe(OLD_PIN);
    const text = decoded.map((p) => Buffer.from(p.data!).toString('utf8')).join('\n');
    expect(text).not.toMatch(standaloneDigits(OLD_PIN));
  });
});

const clients: Client[] = [];
afterAll(async () => Promise.all(clients.map((c) => c.connection.close())));

async function connectRotated(config: Config): Promise<Client> {
  if (clients[0]) return clients[0];
  const connection = await Connection.connect(clientConnectionOptions(config.temporal));
  clients.push(new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec) }));
  return clients[0];
}

function encryptedPayloads(history: unknown): Payload[] {
  return payloadsOf(history).filter((p) => keyIdOf(p) !== undefined);
}

function keyIdOf(p: Payload): string | undefined {
  const encoding = p.metadata?.encoding;
  if (!encoding || Buffer.from(encoding).toString() !== ENCRYPTED_ENCODING) return undefined;
  return Buffer.from(p.metadata![METADATA_KEY_ID]!).toString();
}
