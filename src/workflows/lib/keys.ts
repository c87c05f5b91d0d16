/**
 * The idempotency key of a money movement or order when the caller gave none (docs/idempotency.md):
 * SHA-256 of its purpose and scope. A flow that sent a request under an earlier scheme's key keeps
 * that key: a restart looks for an earlier run's key first (activities/earlier-key.ts).
 */
import { deriveIdempotencyKey } from '../../shared/ids';

export function idempotencyKeyFor(purpose: string, scope: string): string {
  return deriveIdempotencyKey(purpose, scope);
}
