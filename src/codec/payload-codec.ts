/**
 * AES-256-GCM payload encryption, so card numbers, names and failure messages reach Temporal
 * history only as ciphertext (after samples-typescript `encryption/`).
 *
 * An encrypted payload looks like:
 *   metadata.encoding          = "binary/encrypted"
 *   metadata.encryption-key-id = the id of the key that sealed it
 *   data                       = iv (12 bytes) || ciphertext || GCM tag (16 bytes)
 * The plaintext is the protobuf encoding of the whole original Payload, so its metadata
 * (e.g. "json/plain") is hidden as well and comes back intact on decode.
 *
 * The bridge and the workers also sign what they encode (issue 50): with a signal MAC keyring,
 *   metadata.card-issuing-mac-key-id = the id of the MAC key
 *   metadata.card-issuing-mac        = HMAC-SHA256(MAC key, domain || encryption key id || data)
 * and a worker decoding a payload whose MAC verifies says so in the decoded payload's metadata
 * (shared/signal-origin.ts), which it strips from every other payload: a payload key holder can
 * encrypt anything, but only the bridge and the workers can make the provider's word.
 */
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { inspect } from 'node:util';
import { REFUSED_PAYLOAD } from '../shared/refused-payload';
import { ORIGIN_METADATA_KEY, ORIGIN_OURS } from '../shared/signal-origin';
import { METADATA_ENCODING_KEY, type DataConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_KEY_ID = 'encryption-key-id';

/**
 * Where the failure converter lives. Workers and clients load it by path, and the workflow bundle
 * needs the same path (`bundleWorkflowCode({ ...BUNDLE_CONVERTERS })`).
 */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');
/** Where the payload converter lives (./payload-converter): workers and every workflow bundle need it, or no signal counts as ours. */
export const PAYLOAD_CONVERTER_PATH = require.resolve('./payload-converter');
/** What every workflow bundle is built with (`bundleWorkflowCode({ ...BUNDLE_CONVERTERS, … })`). */
export const BUNDLE_CONVERTERS = { failureConverterPath: FAILURE_CONVERTER_PATH, payloadConverterPath: PAYLOAD_CONVERTER_PATH } as const;

export const METADATA_MAC_KEY_ID = 'card-issuing-mac-key-id';
export const METADATA_MAC = 'card-issuing-mac';
const MAC_DOMAIN = 'card-issuing/signal-mac/v1';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PayloadProto = temporal.api.common.v1.Payload;

/** The keyring: `Config['codec']` fits as is; `previousKeys` keeps retired keys readable after a rotation. */
export interface CodecKeys {
  /** Id of the key new payloads are sealed with; recorded in each payload. */
  keyId: string;
  /** 32 bytes, base64. */
  key: string;
  /** Retired keys by id (base64), used only to decrypt payloads already in history. */
  previousKeys?: Readonly<Record<string, string>>;
}

/** Thrown for bad keys and for payloads that cannot be decrypted. Messages never contain key material. */
export class PayloadCodecError extends Error {
  readonly type = 'PayloadCodecError';
}

/** Encrypts every payload with the current key; decrypts with whichever known key sealed it. */
export class EncryptionCodec implements PayloadCodec {
  readonly currentKeyId: string;
  // A private field plus KeyObject: neither JSON.stringify, util.inspect nor a stray log can print the key.
  readonly #keys: ReadonlyMap<string, KeyObject>;

  readonly #refuseUnencrypted: boolean;
  readonly #mac?: { keyId: string; keys: ReadonlyMap<string, KeyObject> };

  /**
   * @param options.refuseUnencrypted a payload that is not ours (a plain-JSON signal from anyone with
   * namespace access) decodes to REFUSED_PAYLOAD instead of its content: workflows drop such signals and
   * fail such inputs (shared/refused-payload.ts). Workers with a real payload key refuse them.
   * @param options.signalMac the bridge's and the workers' MAC keyring (SIGNAL_MAC_KEY): what this
   * codec encodes carries a MAC, and what it decodes is said to be ours only when its MAC verifies.
   * Retired MAC keys stay while histories hold payloads they signed, as retired payload keys do: a
   * replay must see the same verdict.
   */
  constructor(keys: CodecKeys, options: { refuseUnencrypted?: boolean; signalMac?: CodecKeys } = {}) {
    this.#refuseUnencrypted = options.refuseUnencrypted === true;
    if (options.signalMac) this.#mac = { keyId: options.signalMac.keyId, keys: keyRing(options.signalMac) };
    const ring = new Map<string, KeyObject>();
    for (const [id, key] of Object.entries(keys.previousKeys ?? {})) ring.set(id, toKeyObject(id, key));
    if (ring.has(keys.keyId)) throw new PayloadCodecError(`payload codec: key id "${keys.keyId}" is both current and previous`);
    ring.set(keys.keyId, toKeyObject(keys.keyId, keys.key));
    this.currentKeyId = keys.keyId;
    this.#keys = ring;
  }

  /** Ids of every key this codec can decrypt with (the current one last). */
  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.signed(this.seal(payload)));
  }

  /**
   * Payloads that are not encrypted pass through (without any origin they claim), or, when refused,
   * stand as REFUSED_PAYLOAD; an encrypted one is said to be ours only when its MAC verifies here.
   */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (metadataText(payload, METADATA_ENCODING_KEY) === ENCRYPTED_ENCODING) return withOrigin(this.open(payload), this.macVerifies(payload));
      return this.#refuseUnencrypted ? refusedPayload() : withOrigin(payload, false);
    });
  }

  toJSON(): { type: string; currentKeyId: string; keyIds: string[] } {
    return { type: 'EncryptionCodec', currentKeyId: this.currentKeyId, keyIds: this.keyIds };
  }

  [inspect.custom](): string {
    return `EncryptionCodec { currentKeyId: ${this.currentKeyId}, keyIds: [${this.keyIds.join(', ')}] }`;
  }

  private seal(payload: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.keyFor(this.currentKeyId), iv);
    const plaintext = PayloadProto.encode(payload).finish();
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING),
        [METADATA_KEY_ID]: Buffer.from(this.currentKeyId),
      },
      data: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]),
    };
  }

  private signed(payload: Payload): Payload {
    if (!this.#mac) return payload;
    const mac = macOf(this.#mac.keys.get(this.#mac.keyId)!, payload);
    return { ...payload, metadata: { ...payload.metadata, [METADATA_MAC_KEY_ID]: Buffer.from(this.#mac.keyId), [METADATA_MAC]: mac } };
  }

  /** True when the payload carries a MAC under one of our MAC keys over its key id and data. */
  private macVerifies(payload: Payload): boolean {
    const key = this.#mac?.keys.get(metadataText(payload, METADATA_MAC_KEY_ID) ?? '');
    const given = payload.metadata?.[METADATA_MAC];
    if (!key || !given) return false;
    const expected = macOf(key, payload);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private open(payload: Payload): Payload {
    const keyId = metadataText(payload, METADATA_KEY_ID);
    if (!keyId) throw new PayloadCodecError(`cannot decrypt payload: it has no ${METADATA_KEY_ID}`);
    const key = this.keyFor(keyId);
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) {
      throw new PayloadCodecError(`cannot decrypt payload sealed with key id "${keyId}": data is too short`);
    }
    const iv = data.subarray(0, IV_BYTES);
    const tag = data.subarray(data.length - TAG_BYTES);
    const decipher = createDecipheriv(ALGORITHM, key, iv);
    decipher.setAuthTag(tag);
    let plaintext: Buffer;
    try {
      plaintext = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      // GCM refuses to return anything that fails authentication: never hand back forged data.
      throw new PayloadCodecError(`cannot decrypt payload sealed with key id "${keyId}": authentication failed (tampered data or wrong key)`);
    }
    return PayloadProto.decode(plaintext);
  }

  private keyFor(keyId: string): KeyObject {
    const key = this.#keys.get(keyId);
    if (!key) throw new PayloadCodecError(`cannot decrypt payload: unknown encryption key id "${keyId}" (known: ${this.keyIds.join(', ')})`);
    return key;
  }
}

/** The codec for a keyring such as `config.codec`. Throws a PayloadCodecError if a key is not 32 bytes. */
export function createPayloadCodec(keys: CodecKeys): EncryptionCodec {
  return new EncryptionCodec(keys);
}

/**
 * The data converter every Worker and Client must share: payloads encrypted by the codec, and
 * failure messages and stack traces moved into payloads (see ./failure-converter) so they are
 * encrypted too. The SDK takes the failure converter by path, not as an instance, because the
 * workflow sandbox loads it from its own bundle. `options.signalMac` is for the bridge and the
 * workers alone (SIGNAL_MAC_KEY): what they send is taken as the provider's word; a service never holds it.
 */
export function createDataConverter(keys: CodecKeys, options: { refuseUnencrypted?: boolean; signalMac?: CodecKeys } = {}): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keys, options)], ...BUNDLE_CONVERTERS };
}

/**
 * The workers' data converter: with a real payload key, a payload not encrypted with it (anyone's
 * plain-JSON signal) is refused (shared/refused-payload.ts); what the workers write carries the signal
 * MAC, and what they read counts as ours only with it (shared/signal-origin.ts). A replay of their
 * histories needs the same: without the MAC keyring every signal of the bridge's or a worker's would
 * read as a stranger's and be dropped, which the live run did not do.
 */
export function workerDataConverter(config: { codec: CodecKeys & { isDevelopmentKey: boolean }; signalMac?: CodecKeys }): DataConverter {
  return createDataConverter(config.codec, { refuseUnencrypted: !config.codec.isDevelopmentKey, signalMac: config.signalMac });
}

/** What an unencrypted payload decodes to when refused: a JSON value workflows recognise (isRefusedPayload). */
function refusedPayload(): Payload {
  return { metadata: { [METADATA_ENCODING_KEY]: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(REFUSED_PAYLOAD)) };
}

/** The decoded payload, its origin said by us alone: whatever a sender wrote there is dropped. */
function withOrigin(payload: Payload, ours: boolean): Payload {
  if (!ours && payload.metadata?.[ORIGIN_METADATA_KEY] === undefined) return payload;
  const { [ORIGIN_METADATA_KEY]: _claimed, ...metadata } = payload.metadata ?? {};
  // `data` by name: a decoded protobuf message keeps an empty one on its prototype, which a spread would drop.
  return { ...payload, data: payload.data, metadata: ours ? { ...metadata, [ORIGIN_METADATA_KEY]: Buffer.from(ORIGIN_OURS) } : metadata };
}

function macOf(key: KeyObject, payload: Payload): Buffer {
  const keyId = metadataText(payload, METADATA_KEY_ID) ?? '';
  return createHmac('sha256', key).update(`${MAC_DOMAIN}\0${keyId}\0`).update(payload.data ?? new Uint8Array()).digest();
}

function keyRing(keys: CodecKeys): ReadonlyMap<string, KeyObject> {
  const ring = new Map<string, KeyObject>();
  for (const [id, key] of Object.entries(keys.previousKeys ?? {})) ring.set(id, toKeyObject(id, key));
  ring.set(keys.keyId, toKeyObject(keys.keyId, keys.key));
  return ring;
}

function toKeyObject(keyId: string, base64: string): KeyObject {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length !== 32) throw new PayloadCodecError(`payload codec: key "${keyId}" must be 32 bytes encoded in base64`);
  return createSecretKey(bytes);
}

function metadataText(payload: Payload, name: string): string | undefined {
  const value = payload.metadata?.[name];
  return value ? Buffer.from(value).toString('utf8') : undefined;
}
