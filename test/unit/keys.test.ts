/** Key derivation (src/shared/ids.ts, src/shared/sha256.ts): pure, checked against node:crypto and recorded history. */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { createPayloadCodec } from '../../src/codec/payload-codec';
import { loadConfig } from '../../src/config';
import { deriveIdempotencyKey, entityWorkflowId, legacyIdempotencyKey } from '../../src/shared/ids';
import { sha256Hex } from '../../src/shared/sha256';
import { REPLAY_CODEC_ENV } from '../replay/codec';

const nodeSha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
/** The spec's rule for X-Idempotency-Key. */
const SPEC_KEY = /^[a-zA-Z0-9_-]{1,64}$/;

describe('sha256Hex (the workflow sandbox has no node:crypto)', () => {
  it('matches the FIPS 180-4 test vectors', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  });

  // Lengths around the 55/56/64-byte padding boundaries, several blocks, and every UTF-8 width.
  it.each([
    ['55 bytes', 'a'.repeat(55)],
    ['56 bytes', 'a'.repeat(56)],
    ['63 bytes', 'b'.repeat(63)],
    ['64 bytes', 'c'.repeat(64)],
    ['65 bytes', 'd'.repeat(65)],
    ['many blocks', 'fund\u0000card/crd_123/'.repeat(200)],
    ['2-, 3- and 4-byte characters', 'é ü € 中文 𝄞 🙂'],
    ['a NUL separator', 'payout\u0000sendPayout-1'],
  ])('agrees with node:crypto on %s', (_name, input) => {
    expect(sha256Hex(input)).toBe(nodeSha256(input));
  });
});

describe('deriveIdempotencyKey', () => {
  it('is the purpose and the first 48 hex digits of SHA-256(purpose NUL scope)', () => {
    expect(deriveIdempotencyKey('fund', 'fundCard-wf-1')).toBe(`fund_${nodeSha256('fund\u0000fundCard-wf-1').slice(0, 48)}`);
  });

  it('gives the same key for what the caller repeats, and unrelated keys for neighbouring scopes or purposes', () => {
    expect(deriveIdempotencyKey('esim', 'wf-1')).toBe(deriveIdempotencyKey('esim', 'wf-1'));
    const keys = [deriveIdempotencyKey('esim', 'wf-1'), deriveIdempotencyKey('esim', 'wf-2'), deriveIdempotencyKey('esimrc', 'wf-1'), deriveIdempotencyKey('fund', 'wf-1')];
    expect(new Set(keys).size).toBe(keys.length);
    // The separator keeps ("ab", "c") and ("a", "bc") apart.
    expect(deriveIdempotencyKey('ab', 'c').slice(3)).not.toBe(deriveIdempotencyKey('a', 'bc').slice(2));
  });

  it('always fits the provider\'s key rule, however long or odd the scope', () => {
    for (const scope of ['x', 'card/crd_1/upd-ü€', 'w'.repeat(5000)]) expect(deriveIdempotencyKey('wdr', scope)).toMatch(SPEC_KEY);
    expect(deriveIdempotencyKey('p'.repeat(80), 'scope')).toHaveLength(64);
  });
});

describe('legacyIdempotencyKey (flows started before the SHA-256 keys)', () => {
  /** The first moveMoney request recorded in a history from before the change (a fundCard of release 1, kept as a fixture): the key it sent. */
  async function recordedKey(): Promise<{ workflowId: string; idempotencyKey: string }> {
    const file = join(__dirname, 'fixtures/fund-card-fnv-key.json');
    const { events } = JSON.parse(readFileSync(file, 'utf8')) as { events: Array<Record<string, any>> };
    const workflowId = events[0].workflowExecutionStartedEventAttributes.workflowId as string;
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'moveMoney');
    const raw = scheduled!.activityTaskScheduledEventAttributes.input.payloads[0] as { metadata: Record<string, string>; data: string };
    const payload: Payload = {
      metadata: Object.fromEntries(Object.entries(raw.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(raw.data, 'base64'),
    };
    const [decoded] = await createPayloadCodec(loadConfig(REPLAY_CODEC_ENV).codec).decode([payload]);
    return { workflowId, idempotencyKey: defaultPayloadConverter.fromPayload<{ idempotencyKey: string }>(decoded).idempotencyKey };
  }

  it('is exactly the key a running flow already sent (so its retries address the same operation)', async () => {
    const { workflowId, idempotencyKey } = await recordedKey();
    expect(idempotencyKey).toMatch(/^fund_[0-9a-f]{32}$/);
    expect(legacyIdempotencyKey('fund', workflowId)).toBe(idempotencyKey);
  });

  it('is not the new key, and differs per scope', () => {
    expect(legacyIdempotencyKey('fund', 'wf-1')).not.toBe(deriveIdempotencyKey('fund', 'wf-1'));
    expect(legacyIdempotencyKey('fund', 'wf-1')).not.toBe(legacyIdempotencyKey('fund', 'wf-2'));
    expect(legacyIdempotencyKey('fund', 'wf-1')).toMatch(SPEC_KEY);
  });
});

describe('entityWorkflowId', () => {
  it.each([
    ['card', 'crd_1', 'card/crd_1'],
    ['kyc', 'kyc_1', 'kyc-cardholder/kyc_1'],
    ['esimOrder', 'ord_1', 'esim-order/ord_1'],
    ['esim', 'esim_1', 'esim/esim_1'],
    ['payout', 'po-1', 'payout/po-1'],
    ['unrouted', 'CARD_REISSUED', 'unrouted-events/CARD_REISSUED'],
  ] as const)('%s %s → %s', (kind, id, expected) => {
    expect(entityWorkflowId(kind, id)).toBe(expected);
  });
});
