/**
 * Workflow IDs of the entity workflows that receive webhooks, and idempotency keys
 * derived from workflow data. Pure and deterministic: imported by workflow code.
 */
/** `unrouted` collects events of types we do not know yet, one workflow per eventType: recorded, never dropped. */
export type EntityKind = 'card' | 'kyc' | 'esimOrder' | 'esim' | 'payout' | 'unrouted';

const PREFIX: Record<EntityKind, string> = {
  card: 'card',
  kyc: 'kyc-cardholder',
  esimOrder: 'esim-order',
  esim: 'esim',
  payout: 'payout',
  unrouted: 'unrouted-events',
};

/** One workflow per provider entity: readable in the Temporal UI, e.g. `card/crd_123`. */
export function entityWorkflowId(kind: EntityKind, entityId: string): string {
  return `${PREFIX[kind]}/${entityId}`;
}

/**
 * A key derived from the workflow's identity, so a repeated start with the same workflow ID
 * (even after the first run closed) reuses the same key and the provider applies it once.
 */
export function deriveIdempotencyKey(purpose: string, workflowId: string): string {
  return `${purpose}_${hash128(`${purpose}\u0000${workflowId}`)}`.slice(0, 64);
}

/** Two FNV-1a 64-bit hashes with different offsets: collision-resistant enough for keys, no crypto needed in the workflow sandbox. */
function hash128(input: string): string {
  return fnv1a64(input, 0xcbf29ce484222325n) + fnv1a64(input, 0x84222325cbf29ce4n);
}

function fnv1a64(input: string, offset: bigint): string {
  const prime = 0x100000001b3n;
  const mask = (1n << 64n) - 1n;
  let h = offset;
  for (let i = 0; i < input.length; i++) {
    h ^= BigInt(input.charCodeAt(i));
    h = (h * prime) & mask;
  }
  return h.toString(16).padStart(16, '0');
}
