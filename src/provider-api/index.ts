/**
 * The provider's interface as spec/provider-api.md describes it, one file per area (as
 * stripe-node splits its resources): request rules as plain checks, answers and events as types.
 * Nothing here imports a schema library, so workflow code may import any of it (import the area
 * file itself there, to keep the workflow bundle small). Where the spec says "not shown", the
 * shape chosen here is the one the client and the sandbox both use: define it here once.
 */
export * from './endpoints';
export * from './cards';
export * from './wallet';
export * from './kyc';
export * from './payouts';
export * from './esim';
export * from './webhooks';
export { Body, type FieldErrors } from './rules';
// The provider's error codes are declared with every other failure type, in shared/failures.ts.
