/**
 * "This came from the bridge or a worker": the provider's word and our own bookkeeping are taken
 * only from payloads that carry a MAC under SIGNAL_MAC_KEY, a key only the bridge and the workers
 * hold (issue 50). Holding the payload key, as every service with the client and every codec
 * endpoint does, makes no such payload.
 *
 * The worker's codec checks the MAC (codec/payload-codec.ts) and says so in the decoded payload's
 * metadata, which no sender can set; the workflow's payload converter (codec/payload-converter.ts)
 * marks the decoded value with a symbol, which no JSON can carry; trustedSignal reads the mark. Pure:
 * workflow code imports it.
 */
export const ORIGIN_METADATA_KEY = 'card-issuing-origin';
export const ORIGIN_OURS = 'mac-verified';

const OURS = Symbol.for('card-issuing/mac-verified');

/** The value, marked as ours (objects only: a primitive cannot carry the mark, so it never counts as ours). */
export function markOurs<T>(value: T): T {
  if (typeof value === 'object' && value !== null) Object.defineProperty(value, OURS, { value: true, enumerable: false });
  return value;
}

export function isOurs(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[OURS] === true;
}

/** True when a payload's metadata says the worker's codec verified its MAC (bytes compared as they are: no TextDecoder in every sandbox). */
export function saysOurs(metadata: Record<string, Uint8Array | null | undefined> | null | undefined): boolean {
  const value = metadata?.[ORIGIN_METADATA_KEY];
  if (!value || value.length !== ORIGIN_OURS.length) return false;
  for (let i = 0; i < ORIGIN_OURS.length; i++) if (value[i] !== ORIGIN_OURS.charCodeAt(i)) return false;
  return true;
}

/**
 * A trusted signal's body names the workflow it is for. The MAC proves who wrote a payload, not where
 * it was sent: the bridge's word for payout A, copied from A's history into payout B, or a worker's
 * query answer sent as a signal, carries a valid MAC too. Every sender addresses its body; a workflow
 * takes only what is addressed to it.
 */
export function addressed<T>(workflowId: string, body: T): T & { to: string } {
  return { ...(body as object), to: workflowId } as T & { to: string };
}

export function isAddressedTo(value: unknown, workflowId: string): boolean {
  return typeof value === 'object' && value !== null && (value as { to?: unknown }).to === workflowId;
}
