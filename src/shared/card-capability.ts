/**
 * A card action's capability (issue 50; docs/security.md, "Who may act on a card"): holding the
 * payload key, reaching the queue or knowing a card's ID grants nothing. A reveal, a PIN, a delete,
 * a freeze, an unfreeze or a contact change acts only on a request carrying a capability that an
 * authorised service signed (Ed25519, a key on the workers' allow-list), bound to the card, the
 * action, the request's own arguments and an expiry, and used once per card.
 *
 * Pure, no crypto: the card workflow's validators check the binding here before an update is
 * accepted (so a bare update never enters history); the signature is checked by the worker, in the
 * activity that acts, before any provider call (codec/card-capability.ts).
 */
import { canonicalJson } from './canonical-json';
import type { FieldErrors } from './failures';
import { KEY_ID_PATTERN, KEY_ID_RULE } from './key-id';
import { sha256Hex } from './sha256';

/** The card actions that need a capability: revealSensitive, setPin, updateContact, freezeCard, unfreezeCard, deleteCard. */
export const CARD_ACTIONS = ['reveal', 'pin', 'contact', 'freeze', 'unfreeze', 'delete'] as const;
/** One of CARD_ACTIONS. */
export type CardAction = (typeof CARD_ACTIONS)[number];

/** A signed permission for one action on one card with one request, until `exp` (docs/security.md, "Who may act on a card"). */
export interface CardCapability {
  /** The format's version. */
  v: 1;
  /** The signing key's id on the workers' allow-list (CARD_ACTION_TRUSTED_KEYS). */
  keyId: string;
  /** Who asked, as the signing service names them (an operator, a service account): the audit record's "who". */
  sub: string;
  /** The card it allows the action on. */
  cardId: string;
  /** The action it allows. */
  action: CardAction;
  /** Epoch ms; at most CAPABILITY_MAX_TTL_MS ahead of the workflow's clock when the update arrives. */
  exp: number;
  /** Fresh per capability: a card accepts each nonce once. */
  nonce: string;
  /** SHA-256 (hex) of the request's arguments without the capability: a capability for one PIN box or public key serves no other. */
  args: string;
  /** Ed25519 over capabilityMessage(), base64. */
  sig: string;
}

/** A card action's request as it travels: its arguments and the capability that allows it. */
export type WithCapability<A extends object = object> = A & { capability: CardCapability };

/** Long enough for a call's retries, short enough that one copied from history is useless. */
export const CAPABILITY_MAX_TTL_MS = 5 * 60 * 1000;
/** What a capability's `sub` may be: a readable name, never identity data. */
const SUBJECT_PATTERN = /^[A-Za-z0-9_.@:/-]{1,128}$/;
const NONCE_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;
const DIGEST_PATTERN = /^[0-9a-f]{64}$/;
const SIG_PATTERN = /^[A-Za-z0-9+/]{86}==$/;

export const CAPABILITY_RULE =
  'is required: a card action capability signed by an authorised service (the typed client and the CLI make it from CARD_ACTION_SIGNING_KEY); holding the payload key grants nothing';

/** The request's arguments as the capability binds them: everything but the capability itself. */
export function capabilityArgsDigest(request: object | undefined): string {
  const { capability: _ignored, ...args } = (request ?? {}) as Record<string, unknown>;
  return sha256Hex(canonicalJson(args));
}

/** The bytes the signature covers (UTF-8 of this string): every field but the signature, in a fixed order. */
export function capabilityMessage(c: Omit<CardCapability, 'sig'>): string {
  return ['card-issuing/card-action/v1', c.keyId, c.sub, c.cardId, c.action, String(c.exp), c.nonce, c.args].join('\n');
}

/**
 * Field errors of a request's capability for `cardId` and `action`: its shape, its binding (card,
 * action, arguments) and, given `now`, its expiry. Says nothing of the signature, which only the
 * worker checks.
 */
export function capabilityErrors(request: unknown, expected: { cardId: string; action: CardAction; now?: number }): FieldErrors {
  const cap = (request as { capability?: unknown } | undefined)?.capability as Partial<Record<keyof CardCapability, unknown>> | undefined;
  if (typeof cap !== 'object' || cap === null || Array.isArray(cap)) return { capability: CAPABILITY_RULE };
  const errors: FieldErrors = {};
  if (cap.v !== 1) errors['capability.v'] = 'must be 1';
  if (typeof cap.keyId !== 'string' || !KEY_ID_PATTERN.test(cap.keyId)) errors['capability.keyId'] = KEY_ID_RULE;
  if (typeof cap.sub !== 'string' || !SUBJECT_PATTERN.test(cap.sub)) errors['capability.sub'] = 'must be 1-128 characters of [A-Za-z0-9_.@:/-]';
  if (cap.cardId !== expected.cardId) errors['capability.cardId'] = `must be this card (${expected.cardId}): a capability serves the card it was made for`;
  if (cap.action !== expected.action) errors['capability.action'] = `must be "${expected.action}": a capability serves the action it was made for`;
  if (typeof cap.exp !== 'number' || !Number.isSafeInteger(cap.exp)) errors['capability.exp'] = 'must be an expiry in epoch milliseconds';
  else if (expected.now !== undefined && cap.exp <= expected.now) errors['capability.exp'] = 'has passed: ask for a new capability';
  else if (expected.now !== undefined && cap.exp > expected.now + CAPABILITY_MAX_TTL_MS) errors['capability.exp'] = `must be at most ${CAPABILITY_MAX_TTL_MS / 60000} minutes ahead`;
  if (typeof cap.nonce !== 'string' || !NONCE_PATTERN.test(cap.nonce)) errors['capability.nonce'] = 'must be 16-64 characters of [A-Za-z0-9_-]';
  if (typeof cap.args !== 'string' || !DIGEST_PATTERN.test(cap.args)) errors['capability.args'] = 'must be the SHA-256 (hex) of the request without its capability';
  else if (cap.args !== capabilityArgsDigest(request as object)) errors['capability.args'] = 'does not match this request: a capability serves the arguments it was made for';
  if (typeof cap.sig !== 'string' || !SIG_PATTERN.test(cap.sig)) errors['capability.sig'] = 'must be an Ed25519 signature (64 bytes in base64)';
  return errors;
}

/**
 * The nonces (and PIN boxes) a card accepted, each until its expiry: carried across continue-as-new,
 * so a capability or a sealed PIN copied from history is refused by the card it was used on.
 */
export class UsedOnce {
  readonly #until: Map<string, number>;

  constructor(entries: Array<[string, number]> = []) {
    this.#until = new Map(entries);
  }

  has(id: string): boolean {
    return this.#until.has(id);
  }

  add(id: string, until: number): void {
    this.#until.set(id, until);
  }

  /** What is still worth remembering at `now`: an expired capability is refused by its expiry anyway. */
  entries(now: number): Array<[string, number]> {
    return [...this.#until].filter(([, until]) => until > now);
  }
}
