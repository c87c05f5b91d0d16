/**
 * The caller's side of card secrets (issue 40; codec/card-secrets.ts): a PIN is checked and sealed to
 * the workers' PIN public key here, before it leaves the caller's process; a reveal travels with a
 * one-time public key whose private half stays in this call. Nothing this client holds opens what
 * another caller sealed or was sent.
 */
import { oneTimeRevealKey, sealPin, type PinPublicKey } from '../codec/card-secrets';
import type { CardSensitive } from '../provider-api';
import { describeErrors, hasErrors, pinErrors } from '../shared/card-rules';
import type { IssueCardInput, IssueCardRequestInput, RevealRequest, SealedPin, SealedReveal } from '../shared/types';
import { CardIssuingError } from './errors';

/** What a request's digest holds instead of a PIN: never the PIN (10,000 candidates), so never a hash of it. */
export const PIN_IN_DIGEST = 'sealed';

/** The PIN sealed to the workers' key; a PIN that breaks the provider's rule, or no key to seal to, is refused ValidationFailed (the PIN never echoed). */
export async function sealedPinOf(pin: unknown, pinKey: PinPublicKey | undefined, call: string, workflowId: string): Promise<SealedPin> {
  const errors = pinErrors(pin);
  if (hasErrors(errors)) throw new CardIssuingError({ type: 'ValidationFailed', message: `invalid ${call}: ${describeErrors(errors)}`, details: [{ errors }] });
  if (!pinKey) {
    const missing = { pinKey: "is required to send a PIN: the workers' PIN public key (PIN_SEAL_PUBLIC_KEY and PIN_SEAL_KEY_ID), which the PIN is sealed to before it leaves this process" };
    throw new CardIssuingError({ type: 'ValidationFailed', message: `${call} needs pinKey: ${missing.pinKey}`, details: [{ errors: missing }] });
  }
  // Bound to the workflow it is for: a box copied from its history opens for no other card or flow.
  return sealPin(pin as string, pinKey, workflowId);
}

/** issueCard's input with its PIN sealed, and what its digest compares (the PIN's presence, never the PIN). */
export async function issueCardSealed<R extends IssueCardRequestInput>(request: R, pinKey: PinPublicKey | undefined, workflowId: string): Promise<{ input: IssueCardInput & Omit<R, 'pin'>; digestInput: unknown }> {
  if (request.pin === undefined) return { input: request as IssueCardInput & Omit<R, 'pin'>, digestInput: request };
  return { input: { ...request, pin: await sealedPinOf(request.pin, pinKey, 'issueCard', workflowId) }, digestInput: { ...request, pin: PIN_IN_DIGEST } };
}

/** A reveal under a one-time key: `send` carries the public key to the card's workflow; only this call opens its answer. */
export async function revealUnderOneTimeKey<R extends RevealRequest>(cardId: string, allow: (request: RevealRequest) => R, send: (request: R) => Promise<SealedReveal>): Promise<CardSensitive> {
  const key = await oneTimeRevealKey();
  return key.open(await send(allow({ publicKey: key.publicKey })), cardId);
}
