/**
 * The idempotency key of a money movement or order when the caller gave none (docs/idempotency.md).
 * Shipped behind a patch marker (docs/versioning.md): a flow that already sent a request under
 * an FNV-derived key before this change replays without the marker and keeps that key, so its
 * later reads (GET /operations/{key}) and retries address the same operation. Pinned flows derive
 * SHA-256 keys with no marker (release 2: lib/versioning.ts changeApplies).
 */
import { SHA256_KEYS_PATCH, deriveIdempotencyKey, legacyIdempotencyKey } from '../../shared/ids';
import { changeApplies } from './versioning';

export function idempotencyKeyFor(purpose: string, scope: string): string {
  return changeApplies(SHA256_KEYS_PATCH) ? deriveIdempotencyKey(purpose, scope) : legacyIdempotencyKey(purpose, scope);
}
