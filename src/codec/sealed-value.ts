/**
 * Values sealed for their caller alone (the sensitive card read). They are sealed with the
 * card-seal keyring (CARD_SEAL_KEY), which the worker and the typed client hold and the codec
 * endpoint never does: the codec server that lets operators read payloads in the Temporal UI
 * cannot reveal a card number, by its keys as well as by its code. Each sealed value names its
 * key id, so a retired key still opens what it sealed (docs/operations.md, "Rotating keys").
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SealedValue } from '../shared/types';
import type { CodecKeys } from './payload-codec';

/** Domain separation: the same bytes used elsewhere by mistake still give another AES key. */
const PURPOSE = 'card-issuing/sealed-value/v2';

export class SealedValueError extends Error {
  readonly type = 'SealedValueError';
}

export class ValueSealer {
  readonly keyId: string;
  // Private: neither JSON.stringify nor util.inspect prints a key.
  readonly #keys: ReadonlyMap<string, Buffer>;

  constructor(keys: CodecKeys) {
    const ring = new Map<string, Buffer>();
    for (const [id, key] of Object.entries(keys.previousKeys ?? {})) ring.set(id, derive(key));
    ring.set(keys.keyId, derive(keys.key));
    this.keyId = keys.keyId;
    this.#keys = ring;
  }

  /** Ids of every key this sealer opens values with (the current one last). */
  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  seal(value: unknown): SealedValue {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(this.keyId)!, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return { keyId: this.keyId, sealed: Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64') };
  }

  unseal<T>(value: SealedValue): T {
    const key = this.#keys.get(value.keyId);
    if (!key) throw new SealedValueError(`sealed with card-seal key id "${value.keyId}", which this sealer does not hold (known: ${this.keyIds.join(', ')}); add it to CARD_SEAL_PREVIOUS_KEYS`);
    const raw = Buffer.from(value.sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
    } catch {
      throw new SealedValueError(`cannot open a value sealed with card-seal key id "${value.keyId}": authentication failed (another key under that id, or tampered data)`);
    }
    return JSON.parse(plain.toString('utf8')) as T;
  }

  toJSON(): Record<string, unknown> {
    return { keyId: this.keyId, keyIds: this.keyIds };
  }
}

function derive(base64: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(base64, 'base64'), Buffer.alloc(0), PURPOSE, 32));
}
