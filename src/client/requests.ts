/**
 * What the client's calls take and give (issue 30): the keyed requests of the calls that may move
 * money, the result of a card money update, the handle of a started flow, and a request's
 * identity (its digest, its readable ID). Kept apart from the client, which is how the calls are made.
 */
import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson } from '../shared/canonical-json';
import { describeErrors, hasErrors, keyErrors } from '../shared/card-rules';
import { CardIssuingError } from './errors';
import type { FlowName } from '../shared/failures';
import type { IssueCardRequestInput, MoneyMovementInput, MoneyMovementResult, OnboardInput } from '../shared/types';
import type { CallOptions } from './calls';
import type { PurchaseEsimInput, RechargeEsimInput, SendPayoutInput } from './flow-types';
import type { FlowStatus } from '../temporal/flow-status';
import type { EsimQrCodeRef } from './nexus-contract';

/** A call that moves money: its idempotency key is required, and decides the workflow (or update) ID. */
export type Keyed<T> = Omit<T, 'idempotencyKey'> & {
  /**
   * What the caller repeats on retry (1-64 of `[a-zA-Z0-9_-]`): a retry under it, from this process
   * or another, joins the first call; another request under it is refused IdempotencyConflict.
   */
  idempotencyKey: string;
};

/** issueCard's request: the PIN in clear, as the caller has it; the client seals it to the workers' key before it leaves (IssueCardInput carries it sealed). */
export type IssueCardRequest = Keyed<IssueCardRequestInput>;
/** fundCard's and withdrawFromCard's request: the input with the caller's key required. */
export type MoneyMovementRequest = Keyed<MoneyMovementInput>;
/** purchaseEsim's request: the input with the caller's key required. */
export type PurchaseEsimRequest = Keyed<PurchaseEsimInput>;
/** rechargeEsim's request: the input with the caller's key required. */
export type RechargeEsimRequest = Keyed<RechargeEsimInput>;
/** sendPayout's request: the payout with the caller's key required. */
export type SendPayoutRequest = Keyed<SendPayoutInput>;
/** onboardCardholder's request: the input with the caller's key required (ours only: the provider takes none). */
export type OnboardRequest = OnboardInput & { idempotencyKey: string };

/** A card update that moved money: the movement, and the update ID the card answers it under. */
export type MoneyUpdateResult = MoneyMovementResult & { updateId: string };

/** A started flow: wait for its result, read where it stands, or cancel it; `client.flow(id)` re-attaches. */
export interface FlowHandle<R, F extends FlowName = FlowName> {
  /** The flow's workflow ID (for a keyed flow, derived from the key). */
  readonly workflowId: string;
  /** The run this handle follows: the first run started under the ID. */
  readonly runId: string;
  /** The flow's result; a failure is a CardIssuingError whose `type` is one of FlowError<F>. */
  result(opts?: CallOptions): Promise<R>;
  /** Where the flow stands: its status, its run, the activities it waits on. */
  describe(opts?: CallOptions): Promise<FlowStatus>;
  /** Asks the flow to stop; it ends FlowCancelled (a flow may have moved money before: see its result). */
  cancel(opts?: CallOptions): Promise<void>;
  /** Phantom: the flow whose failures result() throws. */
  readonly flowName?: F;
}

/** A caller's key, or ValidationFailed naming it: what the caller repeats on retry. */
export function assertKey(key: unknown, what: string): asserts key is string {
  const errors = typeof key === 'string' ? keyErrors(key) : { idempotencyKey: 'is required: what the caller repeats on retry, 1-64 of [a-zA-Z0-9_-]' };
  if (hasErrors(errors)) throw new CardIssuingError({ type: 'ValidationFailed', message: `invalid ${what}: ${describeErrors(errors)}`, details: [{ errors }] });
}

/** An eSIM QR code reference as a Nexus caller's answer carries it, or ValidationFailed naming each bad field. */
export function assertQrCodeRef(ref: unknown): asserts ref is EsimQrCodeRef {
  const { orderNo, workflowId } = (ref ?? {}) as Partial<EsimQrCodeRef>;
  const errors = {
    ...(typeof workflowId === 'string' && /^(purchase-esim|recharge-esim)\/./.test(workflowId) ? {} : { workflowId: 'must be a purchaseEsim or rechargeEsim flow (purchase-esim/…, recharge-esim/…)' }),
    ...(typeof orderNo === 'string' && orderNo.length > 0 ? {} : { orderNo: 'is required: the order the reference names' }),
  };
  if (hasErrors(errors)) throw new CardIssuingError({ type: 'ValidationFailed', message: `invalid eSIM QR code reference: ${describeErrors(errors)}`, details: [{ errors }] });
}

/** An onboarding's workflow ID is `onboard-cardholder/<key>`. */
export const ONBOARD_CARDHOLDER_ID = 'onboard-cardholder';

/** A keyed flow's workflow ID: its type's prefix, then the caller's key (`onboard-cardholder/<key>`). */
export function keyedWorkflowId(idParts: string[], idempotencyKey: string): string {
  return [...idParts, idempotencyKey].join('/');
}

/** The workflow ID of the onboarding started under a caller's key. */
export function onboardingWorkflowId(idempotencyKey: string): string {
  return keyedWorkflowId([ONBOARD_CARDHOLDER_ID], idempotencyKey);
}

/** The memo field holding a digest of a flow's input, for a repeated start to compare with. */
export const REQUEST_DIGEST_MEMO = 'requestDigest';

/** SHA-256 of the workflow type and its input as canonical JSON: equal inputs, equal digests, whatever their key order. */
export function requestDigest(workflowType: string, input: unknown): string {
  return createHash('sha256').update(workflowType).update('\u0000').update(canonicalJson(input ?? null)).digest('hex');
}

/** e.g. `fund-card/crd_123/key_abc`; a random suffix when the caller gave no key. */
export function readableId(prefix: string, ...parts: Array<string | undefined>): string {
  const given = parts.filter((p): p is string => Boolean(p));
  const last = parts.length === 0 || parts[parts.length - 1] === undefined ? [randomUUID()] : [];
  return [prefix, ...given, ...last].join('/');
}
