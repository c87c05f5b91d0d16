import { KeyObject, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import {
  decodeOptionalFailureToOptionalError,
  encodeErrorToFailure,
  loadDataConverter,
} from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import {
  createDataConverter,
  createPayloadCodec,
  EncryptionCodec,
  ENCRYPTED_ENCODING,
  METADATA_KEY_ID,
  METADATA_MAC,
  METADATA_MAC_KEY_ID,
  PayloadCodecError,
} from '../../src/codec/payload-codec';
import { payloadConverter } from '../../src/codec/payload-converter';
import { isOurs, ORIGIN_METADATA_KEY, ORIGIN_OURS } from '../../src/shared/signal-origin';

const PAN = '4111111111111111';
const OLD = { keyId: 'k2024', key: Buffer.alloc(32, 1).toString('base64') };
const NEW = { keyId: 'k2025', key: Buffer.alloc(32, 2).toString('base64') };

/** A value as text, byte containers and secret KeyObjects as hex, so key material shows however it is held. */
function exposed(value: unknown, seen = new Set<unknown>()): string {
  if (value === null || typeof value !== 'object') return String(value);
  if (seen.has(value)) return '';
  seen.add(value);
  if (value instanceof KeyObject) return value.type === 'secret' ? value.export().toString('hex') : '';
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
  if (value instanceof ArrayBuffer) return Buffer.from(value).toString('hex');
  const inner = value instanceof Map ? [...value.keys(), ...value.values()] : value instanceof Set ? [...value] : Reflect.ownKeys(value).map((k) => Reflect.get(value, k));
  return inner.map((v) => exposed(v, seen)).join('\n');
}

const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value)!;
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
/** Every byte Temporal would store for these payloads, as latin1 so a plaintext match cannot hide. */
const wire = (payloads: Payload[]) =>
  payloads.map((p) => Buffer.from(temporal.api.common.v1.Payload.encode(p).finish()).toString('latin1')).join('');

describe('EncryptionCodec', () => {
  const codec = createPayloadCodec(NEW);

  it('round-trips payloads, their metadata included', async () => {
    const originals = [toPayload({ pan: PAN, name: 'Ada' }), toPayload(undefined), toPayload(new Uint8Array([0, 1, 2]))];
    const decoded = await codec.decode(await codec.encode(originals));
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([{ pan: PAN, name: 'Ada' }, undefined, new Uint8Array([0, 1, 2])]);
    expect(text(decoded[0].metadata?.[METADATA_ENCODING_KEY])).toBe('json/plain');
  });

  it('stores only ciphertext, marked with the encoding and key id', async () => {
    const [encoded] = await codec.encode([toPayload({ pan: PAN })]);
    expect(text(encoded.metadata?.[METADATA_ENCODING_KEY])).toBe(ENCRYPTED_ENCODING);
    expect(text(encoded.metadata?.[METADATA_KEY_ID])).toBe('k2025');
    expect(wire([encoded])).not.toContain(PAN);
    expect(wire([encoded])).not.toContain('json/plain');
    // iv(12) || ciphertext || tag(16): a fresh iv per payload, so equal inputs never look equal.
    const [again] = await codec.encode([toPayload({ pan: PAN })]);
    expect(Buffer.from(again.data!).equals(Buffer.from(encoded.data!))).toBe(false);
  });

  it('passes payloads that are not encrypted through decode untouched', async () => {
    const plain = toPayload({ hello: 'world' });
    const [decoded] = await codec.decode([plain]);
    expect(decoded).toBe(plain);
  });

  it('decrypts with a previous key after rotation and seals with the new one', async () => {
    const [sealedByOld] = await createPayloadCodec(OLD).encode([toPayload(PAN)]);
    const rotated = createPayloadCodec({ ...NEW, previousKeys: { [OLD.keyId]: OLD.key } });

    const [opened] = await rotated.decode([sealedByOld]);
    expect(defaultPayloadConverter.fromPayload(opened)).toBe(PAN);
    const [sealedByNew] = await rotated.encode([toPayload(PAN)]);
    expect(text(sealedByNew.metadata?.[METADATA_KEY_ID])).toBe(NEW.keyId);
  });

  it('names an unknown key id, never the key', async () => {
    const [sealedByOld] = await createPayloadCodec(OLD).encode([toPayload(PAN)]);
    const error: unknown = await codec.decode([sealedByOld]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadCodecError);
    expect((error as PayloadCodecError).type).toBe('PayloadCodecError');
    expect((error as Error).message).toMatch(/unknown encryption key id "k2024"/);
    expect((error as Error).message).not.toContain(OLD.key);
    expect((error as Error).message).not.toContain(NEW.key);
  });

  it('rejects tampered ciphertext', async () => {
    const [encoded] = await codec.encode([toPayload({ pan: PAN })]);
    const data = Buffer.from(encoded.data!);
    data[20] ^= 0x01;
    await expect(codec.decode([{ ...encoded, data }])).rejects.toThrow(/key id "k2025": authentication failed/);
    await expect(codec.decode([{ ...encoded, data: data.subarray(0, 10) }])).rejects.toThrow(/too short/);
  });

  it('keeps key material out of JSON, inspect, its own properties and bad-key errors', () => {
    const rotated = createPayloadCodec({ ...NEW, previousKeys: { [OLD.keyId]: OLD.key } });
    const shown = [
      JSON.stringify(rotated),
      inspect(rotated, { showHidden: true, depth: 10 }),
      // Past the hand-written toJSON / [inspect.custom]: what the object really holds.
      inspect(rotated, { customInspect: false, showHidden: true, depth: 5 }),
      ...Object.values(rotated).map((v) => exposed(v)),
      ...Reflect.ownKeys(rotated).map((k) => exposed(Reflect.get(rotated, k))),
    ].join('\n');
    expect(shown).toContain('k2025');
    for (const key of [NEW.key, OLD.key]) {
      const hex = Buffer.from(key, 'base64').toString('hex');
      expect(shown).not.toContain(key);
      expect(shown).not.toContain(hex);
      expect(shown).not.toContain(hex.replace(/(..)(?!$)/g, '$1 ')); // how inspect prints a Buffer
    }
    const shortKey = Buffer.alloc(16, 9).toString('base64');
    expect(() => createPayloadCodec({ keyId: 'short', key: shortKey })).toThrow(/key "short" must be 32 bytes/);
    expect(() => createPayloadCodec({ keyId: 'short', key: shortKey })).not.toThrow(shortKey);
  });
});

describe('createDataConverter', () => {
  it('encrypts failure messages and stack traces, and restores them on decode', async () => {
    const converter = loadDataConverter(createDataConverter(NEW));
    const failure = await encodeErrorToFailure(converter, new Error(`card ${PAN} declined`));

    expect(failure.message).not.toContain(PAN);
    expect(failure.stackTrace ?? '').not.toContain(PAN);
    const stored = Buffer.from(temporal.api.failure.v1.Failure.encode(failure).finish()).toString('latin1');
    expect(stored).not.toContain(PAN);
    expect(text(failure.encodedAttributes?.metadata?.[METADATA_ENCODING_KEY])).toBe(ENCRYPTED_ENCODING);

    const error = await decodeOptionalFailureToOptionalError(converter, failure);
    expect(error?.message).toBe(`card ${PAN} declined`);
  });
});

describe('the signal MAC (issue 50)', () => {
  const KEYS = { keyId: 'k', key: randomBytes(32).toString('base64') };
  const MAC = { keyId: 'm', key: randomBytes(32).toString('base64') };
  const origin = (p: Payload) => (p.metadata?.[ORIGIN_METADATA_KEY] ? Buffer.from(p.metadata[ORIGIN_METADATA_KEY]!).toString() : undefined);

  it('a payload encoded with the MAC key decodes as ours; one encoded with the payload key alone does not, whatever it claims', async () => {
    const worker = new EncryptionCodec(KEYS, { signalMac: MAC });
    const service = new EncryptionCodec(KEYS);
    const [ours] = await worker.decode(await worker.encode([toPayload({ eventType: 'PAYOUT_FAILED' })]));
    expect(origin(ours)).toBe(ORIGIN_OURS);
    // A payload key holder writes the claim into the inner payload's metadata: it is stripped, not believed.
    const claiming = { ...toPayload({ eventType: 'PAYOUT_FAILED' }), metadata: { ...toPayload(1).metadata, [ORIGIN_METADATA_KEY]: Buffer.from(ORIGIN_OURS) } };
    const [forged] = await worker.decode(await service.encode([claiming]));
    expect(origin(forged)).toBeUndefined();
    // A MAC copied onto another payload does not verify.
    const [signed] = await worker.encode([toPayload({ eventType: 'PAYOUT_COMPLETED' })]);
    const [other] = await service.encode([toPayload({ eventType: 'PAYOUT_FAILED' })]);
    const [grafted] = await worker.decode([{ ...other, metadata: { ...other.metadata, [METADATA_MAC_KEY_ID]: signed.metadata![METADATA_MAC_KEY_ID], [METADATA_MAC]: signed.metadata![METADATA_MAC] } }]);
    expect(origin(grafted)).toBeUndefined();
    // Under a retired MAC key, still ours; under a MAC key the worker never held, not.
    const rotated = new EncryptionCodec(KEYS, { signalMac: { keyId: 'm2', key: randomBytes(32).toString('base64'), previousKeys: { m: MAC.key } } });
    expect(origin((await rotated.decode(await worker.encode([toPayload({ a: 1 })])))[0])).toBe(ORIGIN_OURS);
    const stranger = new EncryptionCodec(KEYS, { signalMac: { keyId: 'm', key: randomBytes(32).toString('base64') } });
    expect(origin((await worker.decode(await stranger.encode([toPayload({ a: 1 })])))[0])).toBeUndefined();
  });

  it('the payload converter marks what decodes as ours, and only that', async () => {
    const worker = new EncryptionCodec(KEYS, { signalMac: MAC });
    const service = new EncryptionCodec(KEYS);
    const [ours] = await worker.decode(await worker.encode([toPayload({ eventType: 'X' })]));
    const [theirs] = await worker.decode(await service.encode([toPayload({ eventType: 'X' })]));
    expect(isOurs(payloadConverter.fromPayload(ours))).toBe(true);
    expect(isOurs(payloadConverter.fromPayload(theirs))).toBe(false);
    // JSON cannot carry the mark: a value that names it is not ours.
    expect(isOurs(JSON.parse('{"card-issuing/mac-verified": true}'))).toBe(false);
  });
});
