/**
 * The onboarding relay's proof that our handler started it. The relay's queue takes plain JSON from
 * anyone who may start a workflow in our namespace, and a relay reads our onboarding through our
 * codec: without this, anyone could list our onboardings and have a relay write their outcomes (the
 * applicant's hosted page) in clear. The handler signs the key and the run with a key derived from the
 * payload key, which only our processes hold; the relay's activities check it before reading.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CodecKeys } from '../codec/payload-codec';

const PURPOSE = 'card-issuing onboarding relay v1';

/** `<keyId>.<mac>`: the payload key it was made with, so that a rotation leaves running relays valid while the old key is kept. */
export function relayToken(codec: CodecKeys, idempotencyKey: string, runId: string): string {
  return `${codec.keyId}.${mac(codec.key, idempotencyKey, runId).toString('base64url')}`;
}

export function relayTokenValid(codec: CodecKeys, token: unknown, idempotencyKey: string, runId: string): boolean {
  if (typeof token !== 'string') return false;
  const [keyId, given] = token.split('.', 2);
  const key = keyId === codec.keyId ? codec.key : codec.previousKeys?.[keyId ?? ''];
  if (!key || !given) return false;
  const expected = mac(key, idempotencyKey, runId);
  const actual = Buffer.from(given, 'base64url');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function mac(payloadKey: string, idempotencyKey: string, runId: string): Buffer {
  const derived = createHmac('sha256', Buffer.from(payloadKey, 'base64')).update(PURPOSE).digest();
  return createHmac('sha256', derived).update(`${idempotencyKey}\n${runId}`).digest();
}
