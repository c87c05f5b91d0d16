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
 */
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { inspect } from 'node:util';
import { REFUSED_PAYLOAD } from '../shared/refused-payload';
import { METADATA_ENCODING_KEY, type DataConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_KEY_ID = 'encryption-key-id';

/**
 * Where the failure converter lives. Workers and clients load it by path, and the workflow bundle
 * needs the same path (`bundleWorkflowCode({ failureConverterPath: FAILURE_CONVERTER_PATH })`).
 */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

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

  /**
   * @param options.refuseUnencrypted a payload that is not ours (a plain-JSON signal from anyone with
   * namespace access) decodes to REFUSED_PAYLOAD instead of its content: workflows drop such signals and
   * fail such inputs (shared/refused-payload.ts). Workers with a real payload key refuse them.
   */
  constructor(keys: CodecKeys, options: { refuseUnencrypted?: boolean } = {}) {
    this.#refuseUnencrypted = options.refuseUnencrypted === true;
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
    return payloads.map((payload) => this.seal(payload));
  }

  /** Payloads that are not encrypted pass through untouched, or, when refused, stand as REFUSED_PAYLOAD. */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (metadataText(payload, METADATA_ENCODING_KEY) === ENCRYPTED_ENCODING) return this.open(payload);
      return this.#refuseUnencrypted ? refusedPayload() : payload;
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
 * workflow sandbox loads it from its own bundle.
 */
export function createDataConverter(keys: CodecKeys, options: { refuseUnencrypted?: boolean } = {}): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keys, options)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** What an unencrypted payload decodes to when refused: a JSON value workflows recognise (isRefusedPayload). */
function refusedPayload(): Payload {
  return { metadata: { [METADATA_ENCODING_KEY]: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(REFUSED_PAYLOAD)) };
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
