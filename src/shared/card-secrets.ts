/**
 * The shape of what card secrets travel as (codec/card-secrets.ts seals and opens them): checked
 * by the card workflow's validators and issueCard before anything is scheduled. Pure, no crypto:
 * a workflow sees only sealed boxes and cannot tell a PIN from its box, only that the box is well formed.
 */
import type { FieldErrors } from './failures';
import { KEY_ID_PATTERN, KEY_ID_RULE } from './key-id';
import type { RevealRequest, SealedPin } from './types';

/** 32 bytes in base64: an X25519 public key, or HPKE's encapsulated key. */
const KEY_32 = /^[A-Za-z0-9+/]{43}=$/;
/** A 4-digit PIN sealed with AES-128-GCM: 4 bytes and a 16-byte tag, 20 bytes in base64. */
const PIN_BOX = /^[A-Za-z0-9+/]{27}=$/;

/**
 * How long a sealed PIN may be accepted: one call and its retries. A box is bound to the workflow it
 * is sent to and this expiry (codec/card-secrets.ts), so one copied from history opens for no other
 * card, and is refused by its own card once used (card-lifecycle.ts) or once expired.
 */
export const PIN_BOX_MAX_TTL_MS = 10 * 60 * 1000;

/** The workflow a PIN box is bound to: the card's workflow for setPin, the issuing flow's for issueCard. */
export function pinBinding(workflowId: string): string {
  return `card-issuing/pin/v2/${workflowId}`;
}

export const PLAINTEXT_PIN_RULE =
  "must be sealed to the workers' PIN key ({ keyId, enc, sealed }: the typed client and the CLI seal it from PIN_SEAL_PUBLIC_KEY); a PIN in clear would stay in history for every payload key holder to read";

/** Field errors of a sealed PIN (and, given `now`, of its expiry); a PIN in clear is refused without ever being echoed. */
export function sealedPinErrors(pin: unknown, field = 'pin', now?: number): FieldErrors {
  if (typeof pin === 'string' || typeof pin === 'number') return { [field]: PLAINTEXT_PIN_RULE };
  if (typeof pin !== 'object' || pin === null || Array.isArray(pin)) return { [field]: 'must be a sealed PIN { keyId, enc, sealed }' };
  const box = pin as Partial<Record<keyof SealedPin, unknown>>;
  const errors: FieldErrors = {};
  if (typeof box.keyId !== 'string' || !KEY_ID_PATTERN.test(box.keyId)) errors[`${field}.keyId`] = KEY_ID_RULE;
  if (typeof box.enc !== 'string' || !KEY_32.test(box.enc)) errors[`${field}.enc`] = 'must be the 32-byte encapsulated key in base64';
  if (typeof box.sealed !== 'string' || !PIN_BOX.test(box.sealed)) errors[`${field}.sealed`] = 'must be a sealed 4-digit PIN (20 bytes in base64)';
  if (typeof box.exp !== 'number' || !Number.isSafeInteger(box.exp)) errors[`${field}.exp`] = 'must be the box expiry in epoch milliseconds: seal the PIN with a current client, which binds it to its card and an expiry';
  else if (now !== undefined && box.exp <= now) errors[`${field}.exp`] = 'has passed: seal the PIN again';
  else if (now !== undefined && box.exp > now + PIN_BOX_MAX_TTL_MS) errors[`${field}.exp`] = `must be at most ${PIN_BOX_MAX_TTL_MS / 60000} minutes ahead`;
  return errors;
}

/** Field errors of a reveal request: the requester's one-time X25519 public key. */
export function revealRequestErrors(request: unknown): FieldErrors {
  const key = (request as Partial<RevealRequest> | undefined)?.publicKey;
  if (typeof key === 'string' && KEY_32.test(key)) return {};
  return { publicKey: "is required: the requester's one-time X25519 public key (32 bytes in base64), which the card is sealed to; the typed client and the CLI send one" };
}
