/**
 * Workflow IDs of the entity workflows that receive webhooks, and idempotency keys
 * derived from workflow data. Pure and deterministic: imported by workflow code.
 */
import { sha256Hex } from './sha256';

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
 * A key derived from what the caller repeats when it retries (the workflow ID, or the update
 * ID of an operation on a card), so a retry reuses the same key and the provider applies it
 * once. SHA-256 (the sandbox has no node:crypto, so a pure implementation): unrelated keys for
 * neighbouring scopes, and no chosen scope collides with another's key. docs/idempotency.md
 * lists every key's scope.
 */
export function deriveIdempotencyKey(purpose: string, scope: string): string {
  return `${purpose}_${sha256Hex(`${purpose}\u0000${scope}`).slice(0, 48)}`.slice(0, 64);
}

/** The patch marker (workflows/lib/keys.ts) of flows that derive keys with SHA-256; Core also records it in TemporalChangeVersion. */
export const SHA256_KEYS_PATCH = 'sha256-idempotency-keys';

/**
 * The one patch marker of a standalone fundCard/withdrawFromCard (workflows/lib/money-movement.ts)
 * that stands for three: SHA-256 keys (SHA256_KEYS_PATCH), a deadline (`money-movement-deadline`) and
 * the card told by the movement's activity instead of a signal from the workflow
 * (`money-flow-tells-card`). Core records it in TemporalChangeVersion as it did the three.
 */
export const MONEY_FLOW_ONE_MARKER_PATCH = 'money-flow-one-marker';

/**
 * True when a run derived its keys with SHA-256: its TemporalChangeVersion holds either marker, or
 * it ran on a Worker Deployment version. Every versioned build derives SHA-256: release 1's recorded
 * a marker for it, release 2's record none (its pinned flows dropped their markers, and the release
 * gate let no unversioned short flow through).
 */
export function derivesSha256Keys(changeVersions: readonly unknown[], ranOnVersionedBuild = false): boolean {
  return ranOnVersionedBuild || changeVersions.includes(SHA256_KEYS_PATCH) || changeVersions.includes(MONEY_FLOW_ONE_MARKER_PATCH);
}

/**
 * The keys of flows started before the SHA-256 keys: a restart of such a flow's workflow ID keeps
 * the key its earlier run sent (activities/earlier-key.ts).
 */
export function legacyIdempotencyKey(purpose: string, workflowId: string): string {
  return `${purpose}_${hash128(`${purpose}\u0000${workflowId}`)}`.slice(0, 64);
}

/**
 * Every key any version of a flow could have derived for (purpose, workflow ID), the current one
 * first. A new run of a workflow ID whose earlier run a deploy ago used another derivation asks
 * the provider under each of them before it posts (activities/earlier-runs.ts): docs/idempotency.md.
 */
export function everyDerivedKey(purpose: string, workflowId: string): string[] {
  return [deriveIdempotencyKey(purpose, workflowId), legacyIdempotencyKey(purpose, workflowId)];
}

/** Two FNV-1a 64-bit hashes with different offsets (legacy keys only). */
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
