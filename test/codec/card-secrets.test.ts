/**
 * Card secrets only their requester reads (issue 40; docs/security.md, "Card secrets"): a card is
 * issued with a PIN by one typed client, an operator's CLI sets another, and two clients reveal the
 * number. Every payload of every history involved, decoded with every key the codec endpoint, the
 * other client and the operator's CLI configuration hold, shows neither PIN nor the full number;
 * each requester reads its own reveal, and no one else's key opens it. Real Temporal dev server,
 * sandbox over HTTP (its pin-check says which PIN the provider holds), codec endpoint over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { loadConfig } from '../../src/config';
import { startCodecServer, type CodecServer } from '../../src/codec/codec-server';
import { createPayloadCodec, type CodecKeys } from '../../src/codec/payload-codec';
import { newPinKeyPair, oneTimeRevealKey, PinOpener } from '../../src/codec/card-secrets';
import { connectOptionsOf, createCardIssuingClient } from '../../src/starter/connect';
import type { CardIssuingClient } from '../../src/client';
import { entityWorkflowId } from '../../src/shared/ids';
import { revealSensitiveUpdate, setPinUpdate } from '../../src/shared/messages';
import type { SealedPin, SealedReveal } from '../../src/shared/types';
import { decodeThrough, payloadsOf, sealedBoxes, standaloneDigits } from '../helpers/history';
import { fixtureBins } from '../helpers/provider';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { jsonOf, runInProcess } from '../starter/cli-helpers';

const A = randomBytes(32).toString('base64');
const P = newPinKeyPair();
const FIRST_PIN = '4821';
const SECOND_PIN = '7395';

describe('card secrets sealed end to end', () => {
  let stack: Stack;
  let codec: CodecServer;
  const clients: CardIssuingClient[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await codec?.close();
    await stack?.close();
  });

  beforeAll(async () => {
    stack = await startStack({ cardProvisioningMs: 50 }, { PAYLOAD_CODEC_KEY: A, PAYLOAD_CODEC_KEY_ID: 'a', PIN_SEAL_PRIVATE_KEY: P.privateKey, PIN_SEAL_KEY_ID: 'p' });
    // The codec endpoint as deployed: the payload keys, nothing else.
    codec = await startCodecServer({ port: 0, codec: createPayloadCodec(loadConfig({ PAYLOAD_CODEC_KEY: A, PAYLOAD_CODEC_KEY_ID: 'a' }).codec) });
  });

  /** A typed client as another service configures it: the payload keys and the workers' PIN public key, no private key. */
  async function serviceClient(): Promise<CardIssuingClient> {
    const client = await createCardIssuingClient(loadConfig({ TEMPORAL_ADDRESS: stack.config.temporal.address, TEMPORAL_TASK_QUEUE: stack.taskQueue, PAYLOAD_CODEC_KEY: A, PAYLOAD_CODEC_KEY_ID: 'a', PIN_SEAL_PUBLIC_KEY: P.publicKey, PIN_SEAL_KEY_ID: 'p' }));
    clients.push(client);
    return client;
  }

  test('a PIN issued and a PIN set, a number revealed twice: no history opens to either PIN or the number with any key but the requester\'s', async () => {
    const [first, second] = [await serviceClient(), await serviceClient()];
    const { pin: pinBin } = await fixtureBins(stack);
    const issueKey = uniqueId('secrets');
    const card = await first.issueCard({ idempotencyKey: issueKey, cardBinId: pinBin.cardBinId, initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace', pin: FIRST_PIN, timings: FAST_TIMINGS });
    expect(card.status).toBe('ENABLE');
    expect(await stack.control('POST', `/cards/${card.cardId}/pin-check`, { pin: FIRST_PIN })).toMatchObject({ pinSet: true, matches: true });
    // A repeat of the call under its key joins the first card: the digest compares that a PIN was given, not which sealing of it.
    expect((await first.issueCard({ idempotencyKey: issueKey, cardBinId: pinBin.cardBinId, initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace', pin: FIRST_PIN, timings: FAST_TIMINGS })).cardId).toBe(card.cardId);

    // An operator's CLI, configured with the payload key and the PIN public key only, sets another PIN.
    const cliConfig = loadConfig({ TEMPORAL_ADDRESS: stack.config.temporal.address, TEMPORAL_TASK_QUEUE: stack.taskQueue, PAYLOAD_CODEC_KEY: A, PAYLOAD_CODEC_KEY_ID: 'a', PIN_SEAL_PUBLIC_KEY: P.publicKey, PIN_SEAL_KEY_ID: 'p' });
    expect(cliConfig.pin.privateKey).toBeUndefined();
    const set = await runInProcess(stack, ['pin', card.cardId, '--json'], { config: cliConfig, readSecret: async () => SECOND_PIN });
    expect(set.code).toBe(0);
    expect(set.stdout + set.stderr).not.toMatch(standaloneDigits(SECOND_PIN));
    expect(await stack.control('POST', `/cards/${card.cardId}/pin-check`, { pin: SECOND_PIN })).toMatchObject({ matches: true });

    // Two clients reveal: each opens its own answer.
    const [one, two] = [await first.revealSensitive(card.cardId), await second.revealSensitive(card.cardId)];
    expect(one.cardNumber).toMatch(/^\d{16}$/);
    expect(one.cardNumber.slice(-4)).toBe(card.cardNumber.slice(-4));
    expect(two).toEqual(one);
    const number = one.cardNumber;

    // Every history involved: the issuing flow and every run of the card's workflow.
    const workflowIds = new Set([`issue-card/${issueKey}`, entityWorkflowId('card', card.cardId)]);
    for await (const w of stack.client.workflow.list({ query: `CardId = "${card.cardId}"` })) workflowIds.add(w.workflowId);
    const histories = await Promise.all([...workflowIds].map((id) => stack.client.workflow.getHandle(id).fetchHistory()));
    const stored = histories.flatMap((h) => payloadsOf(h));
    expect(stored.length).toBeGreaterThan(20);

    // Decoded by the codec endpoint (over HTTP), and with the keys the other client and the CLI hold.
    const keyrings: CodecKeys[] = [connectOptionsOf(cliConfig).codec, connectOptionsOf(loadConfig({ PAYLOAD_CODEC_KEY: A, PAYLOAD_CODEC_KEY_ID: 'a' })).codec];
    const decodings = [await decodeThrough(codec, stored), ...(await Promise.all(keyrings.map((k) => createPayloadCodec(k).decode(stored))))];
    for (const decoded of decodings) {
      const text = [JSON.stringify(histories), ...decoded.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8'))].join('\n');
      expect(text).not.toContain(number);
      for (const pin of [FIRST_PIN, SECOND_PIN]) expect(text).not.toMatch(standaloneDigits(pin));
    }

    // What history keeps instead: PIN boxes only the workers' private key opens, reveal boxes no key here opens.
    const boxes = sealedBoxes(decodings[0]);
    const pins = boxes.filter((b): b is SealedPin => 'keyId' in b);
    const reveals = boxes.filter((b): b is SealedReveal => !('keyId' in b));
    // Each box opens for the flow it was sent to: the issuing flow's, or the card's.
    const openFor = (opener: PinOpener, b: SealedPin) => opener.open(b, `issue-card/${issueKey}`).catch(() => opener.open(b, entityWorkflowId('card', card.cardId)));
    const opened = new Set(await Promise.all(pins.map((b) => openFor(new PinOpener({ keyId: 'p', privateKey: P.privateKey }), b))));
    expect(opened).toEqual(new Set([FIRST_PIN, SECOND_PIN]));
    const stranger = newPinKeyPair();
    await expect(openFor(new PinOpener({ keyId: 'p', privateKey: stranger.privateKey }), pins[0])).rejects.toThrow(/does not open/);
    expect(new Set(reveals.map((r) => r.enc)).size).toBeGreaterThanOrEqual(2);
    for (const reveal of reveals) await expect((await oneTimeRevealKey()).open(reveal, card.cardId)).rejects.toThrow();
  });

  test('a PIN in clear is refused before it is recorded or used, and never echoed; a reveal without a one-time key is refused', async () => {
    const { pin: pinBin } = await fixtureBins(stack);
    const first = await serviceClient();
    const card = await first.issueCard({ idempotencyKey: uniqueId('clear'), cardBinId: pinBin.cardBinId, initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace', timings: FAST_TIMINGS });
    const handle = stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId));
    // A raw update with the PIN in clear: the validator refuses it, so the update never enters history.
    const refused = await handle.executeUpdate(setPinUpdate, { args: [{ pin: '5930' } as never] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (refused as Error).cause as Error;
    expect(cause.message).toMatch(/pin must be sealed to the workers' PIN key/);
    expect(cause.message).not.toContain('5930');
    expect(JSON.stringify(await handle.fetchHistory())).not.toContain('setPin');
    expect(await stack.control('POST', `/cards/${card.cardId}/pin-check`, { pin: '5930' })).toMatchObject({ pinSet: false });

    // A start with a PIN in clear fails ValidationFailed before any POST, naming the field, not the PIN.
    const started = stack.client.workflow.execute('issueCard', { taskQueue: stack.taskQueue, workflowId: uniqueId('issue-card'), args: [{ cardBinId: pinBin.cardBinId, initialAmount: 1000, pin: '5930' }] });
    const failure = await started.catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const appFailure = (failure as WorkflowFailedError).cause as Error & { type?: string };
    expect(appFailure.type).toBe('ValidationFailed');
    expect(appFailure.message).toMatch(/pin must be sealed/);
    expect(appFailure.message).not.toContain('5930');

    // The typed client refuses a PIN that breaks the rule, and one it has no key to seal to, before anything is sent.
    await expect(first.setPin(card.cardId, '7777')).rejects.toMatchObject({ type: 'ValidationFailed', message: expect.not.stringContaining('7777') });
    const keyless = await createCardIssuingClient({ ...stack.config, pin: { ...stack.config.pin, isDevelopmentKey: true }, development: false });
    clients.push(keyless);
    await expect(keyless.setPin(card.cardId, '5930')).rejects.toMatchObject({ type: 'ValidationFailed', message: expect.stringMatching(/needs pinKey: .*PIN_SEAL_PUBLIC_KEY/) });

    // A reveal update without the requester's key (a 1.x client): refused, the provider not asked.
    const noKey = await handle.executeUpdate(revealSensitiveUpdate as never).catch((err: unknown) => err);
    expect(((noKey as Error).cause as Error).message).toMatch(/publicKey is required: the requester's one-time X25519 public key/);
  });

  test('reveal prints the number only to a terminal; under --json only with --show-number; refused otherwise before anything is read', async () => {
    const first = await serviceClient();
    const card = await first.issueCard({ idempotencyKey: uniqueId('reveal'), cardBinId: (await fixtureBins(stack)).plain.cardBinId, initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace', timings: FAST_TIMINGS });
    const { cardNumber } = await first.revealSensitive(card.cardId);
    const piped = await runInProcess(stack, ['reveal', card.cardId]);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toMatch(/only to a terminal, and stdout is not one: nothing was read/);
    const json = await runInProcess(stack, ['reveal', card.cardId, '--json']);
    expect(json.code).toBe(2);
    expect(json.stdout).not.toContain(cardNumber);
    expect(jsonOf(json).error.message).toMatch(/add --show-number/);
    const terminal = await runInProcess(stack, ['reveal', card.cardId], { terminal: true });
    expect(terminal.code).toBe(0);
    expect(terminal.stdout).toContain(`cardNumber: ${cardNumber}`);
    expect(terminal.stderr).not.toContain(cardNumber);
    const asked = await runInProcess(stack, ['reveal', card.cardId, '--json', '--show-number']);
    expect(jsonOf(asked)).toMatchObject({ ok: true, command: 'reveal', result: { cardNumber } });
  });
});
