/**
 * Rotating both keys without losing a flow (issue 31; docs/operations.md, "Rotating keys"):
 * flows started under payload key A and card-seal key S1 (a card workflow with money moved, an
 * onboarding parked on its review, a revealed card number) go on after everything restarts with
 * B and S2 current and A and S1 retired. Their histories, written under both keys, decode through
 * the codec endpoint; the number sealed under S1 still reveals; the codec endpoint's own
 * configuration cannot open it. Real Temporal dev server, sandbox over HTTP, codec endpoint over HTTP.
 */
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { loadConfig, type Config } from '../../src/config';
import { startBridge, type RunningBridge } from '../../src/bridge';
import { startCodecServer, type CodecServer } from '../../src/codec/codec-server';
import { createDataConverter, createPayloadCodec, ENCRYPTED_ENCODING, METADATA_KEY_ID } from '../../src/codec/payload-codec';
import { ValueSealer } from '../../src/codec/sealed-value';
import { createWorkers, type WorkerFleet } from '../../src/temporal/workers';
import { clientConnectionOptions } from '../../src/temporal/connection';
import { sampleFolder, sampleKycForm, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { entityWorkflowId } from '../../src/shared/ids';
import { onboardingQuery, revealSensitiveUpdate } from '../../src/shared/messages';
import type { CardSensitive } from '../../src/provider/api';
import { createCardIssuingClient } from '../../src/starter/connect';
import { issueTestCard } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

type Payload = temporal.api.common.v1.IPayload;

const key = () => randomBytes(32).toString('base64');
const A = key();
const B = key();
const S1 = key();
const S2 = key();

describe('key rotation without losing a flow', () => {
  let stack: Stack;
  let dir: string;
  const stoppers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('flows started under key A complete after a restart with B current and A retired; histories decode; the sealed number reveals, not through the codec endpoint', async () => {
    dir = sampleFolder('rotation');
    // --- under A and S1 -------------------------------------------------------------------
    stack = await startStack({ cardProvisioningMs: 50, kycReviewMs: 3_600_000 }, { PAYLOAD_CODEC_KEY: A, PAYLOAD_CODEC_KEY_ID: 'a', CARD_SEAL_KEY: S1, CARD_SEAL_KEY_ID: 's1' });
    const before = await createCardIssuingClient(stack.config);
    const card = await issueTestCard(stack, 1000);
    await before.fundCard({ cardId: card.cardId, amount: 250, idempotencyKey: uniqueId('fund-a'), timings: FAST_TIMINGS });
    const cardHandle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    const sealed = await cardHandle.executeUpdate(revealSensitiveUpdate, { updateId: 'reveal-under-s1' });
    expect(sealed.keyId).toBe('s1');
    const onboardingId = uniqueId('onboard');
    const onboarding = await stack.client.workflow.start('onboardCardholder', {
      taskQueue: stack.taskQueue,
      workflowId: onboardingId,
      args: [sampleKycForm(writeSampleDocuments(dir).documents, { timings: FAST_TIMINGS })],
    });
    let cardholderId: string | undefined;
    await waitUntil(async () => Boolean((cardholderId = (await onboarding.query(onboardingQuery)).cardholderId)), 60_000, 'the onboarding to submit and park on its review');
    await before.close();

    // --- everything stops, and starts again with B and S2 current, A and S1 retired -------------
    await stack.stopWorkers();
    await stack.bridge.close();
    const rotated: Config = {
      ...loadConfig({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_KEY_ID: 'b', PAYLOAD_CODEC_PREVIOUS_KEYS: `a:${A}`, CARD_SEAL_KEY: S2, CARD_SEAL_KEY_ID: 's2', CARD_SEAL_PREVIOUS_KEYS: `s1:${S1}`, PROVIDER_TIMEOUT_MS: '5000' }),
      temporal: stack.config.temporal,
      provider: stack.config.provider,
    };
    const fleet: WorkerFleet = await createWorkers({ config: rotated, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, enforceRateBudget: false });
    const running = fleet.run();
    stoppers.push(async () => {
      fleet.shutdown();
      await running;
    });
    const bridge: RunningBridge = await startBridge(rotated, { port: 0 });
    stoppers.push(() => bridge.close());
    await stack.control('PUT', '/config', { webhookUrl: `${bridge.url}/webhooks/provider` });
    // The codec endpoint as deployed: payload keys only (no CARD_SEAL_KEY in its environment).
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

    // Both histories hold payloads under A and under B; the codec endpoint decodes every one.
    for (const workflowId of [entityWorkflowId('card', card.cardId), onboardingId]) {
      const payloads = encryptedPayloads(await stack.client.workflow.getHandle(workflowId).fetchHistory());
      expect(new Set(payloads.map(keyIdOf))).toEqual(new Set(['a', 'b']));
      const decoded = await decodeThrough(codec, payloads);
      expect(decoded.some((p) => keyIdOf(p) !== undefined)).toBe(false);
    }

    // The number sealed under S1, read back from history by the rotated client, opens with S1 retired.
    const readBack = await (await connectRotated(rotated)).workflow.getHandle(entityWorkflowId('card', card.cardId)).getUpdateHandle<typeof sealed>('reveal-under-s1').result();
    const number = new ValueSealer(rotated.seal!).unseal<CardSensitive>(readBack).cardNumber;
    expect(number.slice(-4)).toBe(card.cardNumber.slice(-4));
    // A new reveal is sealed under S2 and the rotated client opens it.
    expect((await after.revealSensitive(card.cardId)).cardNumber).toBe(number);
    // The codec endpoint's configuration holds no card-seal key, and none of its keys opens the value.
    expect(codecConfig.seal).toBeUndefined();
    for (const [keyId, k] of [['b', B], ['a', A]]) expect(() => new ValueSealer({ keyId: 's1', key: k, previousKeys: { [keyId]: k } }).unseal(readBack)).toThrow(/authentication failed/);
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

function encryptedPayloads(node: unknown, out: Payload[] = []): Payload[] {
  if (!node || typeof node !== 'object' || node instanceof Uint8Array) return out;
  const obj = node as Payload & Record<string, unknown>;
  if (obj.metadata && obj.data instanceof Uint8Array) {
    if (keyIdOf(obj) !== undefined) out.push(obj);
    return out;
  }
  for (const value of Object.values(obj)) encryptedPayloads(value, out);
  return out;
}

function keyIdOf(p: Payload): string | undefined {
  const encoding = p.metadata?.encoding;
  if (!encoding || Buffer.from(encoding).toString() !== ENCRYPTED_ENCODING) return undefined;
  return Buffer.from(p.metadata![METADATA_KEY_ID]!).toString();
}

/** POST /decode as the Temporal UI does it: JSON, base64 fields. */
async function decodeThrough(codec: CodecServer, payloads: Payload[]): Promise<Payload[]> {
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  const body = { payloads: payloads.map((p) => ({ metadata: Object.fromEntries(Object.entries(p.metadata!).map(([k, v]) => [k, b64(v)])), data: b64(p.data!) })) };
  const res = await fetch(`${codec.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-namespace': 'default' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const json = (await res.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
  return json.payloads.map((p) => ({ metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])), data: Buffer.from(p.data, 'base64') }));
}
