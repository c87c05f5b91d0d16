/**
 * Card secrets sealed end to end with HPKE (RFC 9180; @hpke/core with DHKEM(X25519, HKDF-SHA256),
 * HKDF-SHA256 and AES-128-GCM), so what history keeps of them opens with no key an operator, the
 * codec endpoint or another service holds (issue 40; docs/security.md, "Card secrets"):
 *
 * - a PIN is sealed by its caller (typed client, CLI) to the workers' PIN public key, and opened only
 *   by a worker's private key, inside the activity that sends it to the provider;
 * - a revealed card is sealed by the worker to a one-time public key its requester sent with the
 *   request; the requester's private key never leaves the requester.
 *
 * Keys travel as 32 raw bytes in base64. A PIN key pair rotates as the other keys do: a retired
 * private key still opens what it sealed until it is deleted (docs/operations.md, "Rotating keys").
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';
import type { CardSensitive } from '../provider-api';
import type { SealedPin, SealedReveal } from '../shared/types';
import { pinBinding } from '../shared/card-secrets';

const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
const text = new TextEncoder();

/**
 * Domain separation: a PIN box never opens as a reveal, and a reveal of one card never as another's.
 * A PIN box is bound to the workflow it is sent to (its card's, or the issuing flow's) and its expiry:
 * one copied from a card's history opens for no other card, and a changed expiry opens for none.
 */
const pinInfo = (workflowId: string, exp: number) => text.encode(`${pinBinding(workflowId)}/${exp}`);
/** The most a box may live: one call and its retries (shared/card-secrets.ts). */
export const DEFAULT_PIN_BOX_TTL_MS = 5 * 60 * 1000;
const revealInfo = (cardId: string) => text.encode(`card-issuing/reveal/v1/${cardId}`);

export class CardSecretError extends Error {
  readonly type = 'CardSecretError';
}

/** The workers' PIN public key as callers hold it (PIN_SEAL_PUBLIC_KEY, PIN_SEAL_KEY_ID). */
export interface PinPublicKey {
  /** The key's id (PIN_SEAL_KEY_ID): sealed PINs carry it so a worker picks the matching private key, current or retired. */
  keyId: string;
  /** 32 bytes (X25519) in base64. */
  publicKey: string;
}

/** The workers' PIN key pairs: the current private key and retired ones, each under its id. */
export interface PinPrivateKeys {
  keyId: string;
  privateKey: string;
  previousKeys?: Record<string, string>;
}

/** Seals a PIN to the workers' public key for `workflowId` (the card's `card/<id>`, or the issuing flow's ID): what the caller sends, and all history ever holds of it. */
export async function sealPin(pin: string, key: PinPublicKey, workflowId: string, opts: { ttlMs?: number; now?: number } = {}): Promise<SealedPin> {
  const exp = (opts.now ?? Date.now()) + (opts.ttlMs ?? DEFAULT_PIN_BOX_TTL_MS);
  const recipientPublicKey = await suite.kem.deserializePublicKey(bytesOf(key.publicKey));
  const { enc, ct } = await suite.seal({ recipientPublicKey, info: pinInfo(workflowId, exp) }, text.encode(pin), text.encode(key.keyId));
  return { keyId: key.keyId, enc: base64(enc), sealed: base64(ct), exp };
}

/** A worker's opener of sealed PINs: the current key and every retired one it was given. */
export class PinOpener {
  // Private: neither JSON.stringify nor util.inspect prints a key.
  readonly #keys: ReadonlyMap<string, string>;
  readonly keyId: string;

  constructor(keys: PinPrivateKeys) {
    this.#keys = new Map([...Object.entries(keys.previousKeys ?? {}), [keys.keyId, keys.privateKey]]);
    this.keyId = keys.keyId;
  }

  /** Ids of every key this opener holds (the current one last). */
  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  /** The PIN sealed for `workflowId`; throws a CardSecretError naming the key id (never the PIN) when it cannot. */
  async open(sealed: SealedPin, workflowId: string): Promise<string> {
    if (typeof sealed.exp !== 'number') throw new CardSecretError('the PIN box is not bound to a card and an expiry (sealed by a client from before 0.2): seal the PIN again');
    const key = this.#keys.get(sealed.keyId);
    if (!key) throw new CardSecretError(`the PIN was sealed to PIN key id "${sealed.keyId}", which the workers do not hold (known: ${this.keyIds.join(', ')}): seal it again to the current PIN_SEAL_PUBLIC_KEY`);
    try {
      const recipientKey = await suite.kem.deserializePrivateKey(bytesOf(key));
      const plain = await suite.open({ recipientKey, enc: bytesOf(sealed.enc), info: pinInfo(workflowId, sealed.exp) }, bytesOf(sealed.sealed), text.encode(sealed.keyId));
      return new TextDecoder().decode(plain);
    } catch {
      throw new CardSecretError(`the PIN sealed to PIN key id "${sealed.keyId}" does not open for ${workflowId}: sealed for another card or flow, to another key under that id, or altered`);
    }
  }

  toJSON(): Record<string, unknown> {
    return { keyId: this.keyId, keyIds: this.keyIds };
  }
}

/** The worker's side of a reveal: the card sealed to the requester's one-time public key. */
export async function sealReveal(card: object, cardId: string, requesterPublicKey: string): Promise<SealedReveal> {
  const recipientPublicKey = await suite.kem.deserializePublicKey(bytesOf(requesterPublicKey));
  const { enc, ct } = await suite.seal({ recipientPublicKey, info: revealInfo(cardId) }, text.encode(JSON.stringify(card)));
  return { enc: base64(enc), sealed: base64(ct) };
}

/** The requester's side of a reveal: a one-time key pair whose private half never leaves this object. */
export interface RevealKey {
  /** What the request carries. */
  publicKey: string;
  open(sealed: SealedReveal, cardId: string): Promise<CardSensitive>;
}

export async function oneTimeRevealKey(): Promise<RevealKey> {
  const pair = await suite.kem.generateKeyPair();
  return {
    publicKey: base64(await suite.kem.serializePublicKey(pair.publicKey)),
    async open(sealed, cardId) {
      const plain = await suite.open({ recipientKey: pair.privateKey, enc: bytesOf(sealed.enc), info: revealInfo(cardId) }, bytesOf(sealed.sealed));
      return JSON.parse(new TextDecoder().decode(plain)) as CardSensitive;
    },
  };
}

/** The X25519 public key of a private key, both 32 raw bytes in base64 (what PIN_SEAL_PUBLIC_KEY must be). */
export function publicKeyOf(privateKey: string): string {
  const der = Buffer.concat([PKCS8_X25519_PREFIX, Buffer.from(privateKey, 'base64')]);
  const jwk = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url').toString('base64');
}

/** A fresh PIN key pair (tests, and `openssl genpkey -algorithm X25519` does the same for operators). */
export function newPinKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey } = generateKeyPairSync('x25519');
  const raw = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url').toString('base64');
  return { privateKey: raw, publicKey: publicKeyOf(raw) };
}

/** PKCS#8 wrapping of a raw X25519 private key (RFC 8410): what node:crypto imports. */
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

function bytesOf(b64: string): ArrayBuffer {
  const buf = Buffer.from(b64, 'base64');
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

function base64(bytes: ArrayBuffer): string {
  return Buffer.from(bytes).toString('base64');
}
