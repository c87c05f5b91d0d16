/**
 * Card action capabilities (shared/card-capability.ts), the crypto half: an authorised service
 * signs with its Ed25519 key (CARD_ACTION_SIGNING_KEY, the typed client and the CLI); the workers
 * verify against their allow-list of public keys (CARD_ACTION_TRUSTED_KEYS) in the activity that
 * acts, before any provider call. An operator's decision on a payout held for approval (approve,
 * reject) is signed and verified the same way, under a domain of its own. Keys travel as 32 raw bytes
 * in base64 (the private key is the seed).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { inspect } from 'node:util';
import {
  capabilityArgsDigest,
  capabilityErrors,
  capabilityMessage,
  payoutCapabilityMessage,
  payoutDecisionErrors,
  type CardAction,
  type CardCapability,
  type PayoutAction,
  type PayoutCapability,
  type PayoutDecision,
  type WithPayoutCapability,
} from '../shared/card-capability';
import { describeErrors, hasErrors } from '../shared/card-rules';

/** How long a capability the client makes lives: one call and its retries. */
export const DEFAULT_CAPABILITY_TTL_MS = 2 * 60 * 1000;

export class CapabilityError extends Error {
  readonly type = 'CapabilityError';
}

/** A service's signing key for card actions. */
export interface CardActionKey {
  /** The key's id on the workers' allow-list (CARD_ACTION_TRUSTED_KEYS). */
  keyId: string;
  /** The Ed25519 seed, 32 bytes in base64. */
  privateKey: string;
  /** Who this service says is asking (the audit record's "who"); default: the key id. */
  subject?: string;
}

export class CardActionSigner {
  readonly keyId: string;
  readonly subject: string;
  readonly #key: KeyObject;

  constructor(key: CardActionKey) {
    this.keyId = key.keyId;
    this.subject = key.subject ?? key.keyId;
    this.#key = privateKeyObject(key.privateKey);
  }

  /** The capability for `action` on `cardId` with exactly these arguments (the request without its capability). */
  sign(cardId: string, action: CardAction, args: object, opts: { ttlMs?: number; subject?: string; now?: number } = {}): CardCapability {
    const unsigned = {
      v: 1 as const,
      keyId: this.keyId,
      sub: opts.subject ?? this.subject,
      cardId,
      action,
      exp: (opts.now ?? Date.now()) + (opts.ttlMs ?? DEFAULT_CAPABILITY_TTL_MS),
      nonce: randomBytes(18).toString('base64url'),
      args: capabilityArgsDigest(args),
    };
    return { ...unsigned, sig: sign(null, Buffer.from(capabilityMessage(unsigned)), this.#key).toString('base64') };
  }

  /** `args` with the capability that allows it. */
  authorise<A extends object>(cardId: string, action: CardAction, args: A, opts?: { ttlMs?: number; subject?: string }): A & { capability: CardCapability } {
    return { ...args, capability: this.sign(cardId, action, args, opts) };
  }

  /** An operator's decision on the payout flow `workflowId` (approve or reject), bound to exactly this decision (its run, merOrderNo, amount, note). */
  decidePayout(workflowId: string, action: PayoutAction, decision: PayoutDecision, opts: { ttlMs?: number; subject?: string; now?: number } = {}): WithPayoutCapability {
    const unsigned = {
      v: 1 as const,
      keyId: this.keyId,
      sub: opts.subject ?? this.subject,
      workflowId,
      action,
      exp: (opts.now ?? Date.now()) + (opts.ttlMs ?? DEFAULT_CAPABILITY_TTL_MS),
      nonce: randomBytes(18).toString('base64url'),
      args: capabilityArgsDigest(decision),
    };
    const capability: PayoutCapability = { ...unsigned, sig: sign(null, Buffer.from(payoutCapabilityMessage(unsigned)), this.#key).toString('base64') };
    return { ...decision, capability };
  }

  toJSON(): Record<string, unknown> {
    return { keyId: this.keyId, subject: this.subject };
  }

  [inspect.custom](): string {
    return `CardActionSigner { keyId: ${this.keyId} }`;
  }
}

/** Who a verified capability says asked: what the audit record keeps. */
export interface CapabilityHolder {
  keyId: string;
  sub: string;
  nonce: string;
}

/** The workers' side: the allow-list of public keys by id. */
export class CardActionVerifier {
  readonly #keys: ReadonlyMap<string, KeyObject>;

  constructor(trusted: Readonly<Record<string, string>>) {
    this.#keys = new Map(Object.entries(trusted).map(([id, key]) => [id, publicKeyObject(key)]));
  }

  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  /**
   * The holder of a capability that allows `action` on `cardId` with `request`'s arguments; throws a
   * CapabilityError naming what is wrong otherwise. The expiry is checked only given `now`: the card
   * workflow checked it when it accepted the update, and the activity's retries after it must not fail on it.
   */
  verify(request: unknown, expected: { cardId: string; action: CardAction; now?: number }): CapabilityHolder {
    const cap = (request as { capability?: CardCapability } | undefined)?.capability;
    const errors = capabilityErrors(request, expected);
    if (hasErrors(errors)) throw new CapabilityError(`card action refused: ${describeErrors(errors)}`);
    const { sig, ...unsigned } = cap!;
    this.#signed('card action', cap!.keyId, capabilityMessage(unsigned), sig);
    return { keyId: cap!.keyId, sub: cap!.sub, nonce: cap!.nonce };
  }

  /**
   * The operator who decided the payout `expected` describes: a key among its approvers and on the
   * allow-list, whose signature holds over this decision; throws a CapabilityError naming what is
   * wrong otherwise. The expiry is checked only given `now`, as for card actions.
   */
  verifyPayout(request: unknown, expected: Parameters<typeof payoutDecisionErrors>[1]): CapabilityHolder {
    const errors = payoutDecisionErrors(request, expected);
    if (hasErrors(errors)) throw new CapabilityError(`payout decision refused: ${describeErrors(errors)}`);
    const { sig, ...unsigned } = (request as WithPayoutCapability).capability;
    this.#signed('payout decision', unsigned.keyId, payoutCapabilityMessage(unsigned), sig);
    return { keyId: unsigned.keyId, sub: unsigned.sub, nonce: unsigned.nonce };
  }

  /** The key is on the allow-list and its signature over `message` holds, or a CapabilityError naming which is not so. */
  #signed(what: string, keyId: string, message: string, sig: string): void {
    const key = this.#keys.get(keyId);
    if (!key) throw new CapabilityError(`${what} refused: capability.keyId "${keyId}" is not on the workers' allow-list (CARD_ACTION_TRUSTED_KEYS)`);
    if (!verify(null, Buffer.from(message), key, Buffer.from(sig, 'base64'))) {
      throw new CapabilityError(`${what} refused: capability.sig does not verify under key "${keyId}" (forged or altered)`);
    }
  }
}

/** A fresh signing key pair (tests; `openssl genpkey -algorithm ed25519` does the same for operators). */
export function newCardActionKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url').toString('base64');
  return { privateKey: seed, publicKey: cardActionPublicKeyOf(seed) };
}

/** The public key (32 bytes, base64) of a signing key's seed: what goes on the workers' allow-list. */
export function cardActionPublicKeyOf(privateKey: string): string {
  const jwk = createPublicKey(privateKeyObject(privateKey)).export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url').toString('base64');
}

// RFC 8410 wrappings of raw Ed25519 keys: what node:crypto imports.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function privateKeyObject(seed: string): KeyObject {
  const raw = Buffer.from(seed, 'base64');
  if (raw.length !== 32) throw new CapabilityError('a card action signing key must be a 32-byte Ed25519 seed in base64');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, raw]), format: 'der', type: 'pkcs8' });
}

function publicKeyObject(key: string): KeyObject {
  const raw = Buffer.from(key, 'base64');
  if (raw.length !== 32) throw new CapabilityError('a card action public key must be 32 bytes (Ed25519) in base64');
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
}
