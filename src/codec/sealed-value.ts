/**
 * Values sealed for their caller alone (the sensitive card read). The key is derived from the
 * payload codec key with a different purpose, so the codec server that lets operators read
 * payloads in the Temporal UI still cannot reveal a card number: only our typed client unseals.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SealedValue } from '../shared/types';

const PURPOSE = 'card-issuing/sealed-value/v1';

export class ValueSealer {
  readonly keyId: string;
  readonly #key: Buffer;

  constructor(codecKey: { keyId: string; key: string }) {
    this.keyId = codecKey.keyId;
    this.#key = Buffer.from(hkdfSync('sha256', Buffer.from(codecKey.key, 'base64'), Buffer.alloc(0), PURPOSE, 32));
  }

  seal(value: unknown): SealedValue {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return { keyId: this.keyId, sealed: Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64') };
  }

  unseal<T>(value: SealedValue): T {
    if (value.keyId !== this.keyId) throw new Error(`sealed with key id "${value.keyId}", this sealer holds "${this.keyId}"`);
    const raw = Buffer.from(value.sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const plain = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as T;
  }

  toJSON(): Record<string, string> {
    return { keyId: this.keyId };
  }
}
