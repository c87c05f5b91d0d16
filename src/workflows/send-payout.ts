/**
 * sendPayout: creates a payout once, under a durable idempotency key (the caller's, or derived
 * from the workflow ID, so a repeated start reuses it), then follows it to its terminal status
 * as trackPayout does. Money leaves the wallet here, so:
 * - the input is checked against the provider's rules before any call (ValidationFailed);
 * - creation is retried until its outcome is known, each retry looking the payout up first
 *   (activities/payouts.ts): a payout is created once whatever the failures;
 * - a FAILED payout (insufficient balance included) is a result with its reason, not a stuck
 *   or failed flow; `shortfall` says how much the wallet was missing when the provider said;
 * - a payout held for approval (`approval`: a Nexus caller's above its payoutApprovalAbove, set by
 *   our handler) sends nothing until an operator's signed approval (lib/payout.ts awaitPayoutApproval),
 *   and posts with it, checked again before the POST; rejected or not approved in time, it ends
 *   PayoutNotApproved, nothing sent.
 */
import { patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { PayoutAnswer } from '../provider/answers';
import { createPayoutRequest } from '../provider-api/payouts';
import { hasCallerFieldErrors, withoutCallerFieldErrors } from '../provider-api/rules';
import { describeErrors, hasErrors, hasTimingsErrors, keyErrors, payoutTimingsErrors, withoutTimingsErrors } from '../shared/card-rules';
import { payoutApprovalGateErrors, type PayoutApprovalGate } from '../shared/card-capability';
import { FailureType, shortfallOf, type FieldErrors } from '../shared/failures';
import { phaseOf } from '../shared/statuses';
import { idempotencyKeyFor } from './lib/keys';
import { FLOW_KIND } from '../shared/search-attributes';
import type { SendPayoutInput } from '../shared/types';
import { awaitPayoutApproval, followPayout } from './lib/payout';
import { MONEY_DEADLINE_MS } from './lib/money-movement';
import { failWith, providerCalls } from './lib/provider';
import { declareVersioning } from './lib/versioning';

/** A payout's creation is not given up on for a count of attempts: only its deadline ends it. */
const creationRetry = { maximumAttempts: Number.POSITIVE_INFINITY, maximumInterval: '20 seconds' } as const;

/** The flow's input: the payout, and when our Nexus handler holds it for an operator's approval, the gate. */
export type SendPayoutFlowInput = SendPayoutInput & { approval?: PayoutApprovalGate };

export async function sendPayout(input: SendPayoutFlowInput): Promise<PayoutAnswer> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'sendPayout' }]);
  let errors = sendPayoutErrors(input ?? ({} as SendPayoutFlowInput));
  // A payout started before its timings were checked keeps running with them (its history replays).
  if (hasTimingsErrors(errors) && !patched(PAYOUT_TIMINGS_CHECKED_PATCH)) errors = withoutTimingsErrors(errors);
  // Likewise one started before `extra` was allow-listed keeps its fields (the provider client refuses them all the same).
  if (hasCallerFieldErrors(errors) && !patched(PAYOUT_EXTRA_ALLOWLISTED_PATCH)) errors = withoutCallerFieldErrors(errors);
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid payout: ${describeErrors(errors)}`, [{ errors }]);

  const { idempotencyKey: givenKey, timings, approval: gate, ...request } = input;
  // Asked only of a payout held for approval: no other history holds the marker.
  const approval = gate !== undefined && patched(PAYOUT_APPROVAL_PATCH) ? await awaitPayoutApproval(input, gate) : undefined;
  // Behind the SHA-256 keys' marker, as every derived key (lib/keys.ts): a payout flow that replays
  // from before it keeps its first key. Either way the activity looks the payout up by merOrderNo
  // before any POST, so a key changed under a running flow cannot create a second payout.
  const idempotencyKey = givenKey ?? idempotencyKeyFor('payout', workflowInfo().workflowId);
  // Attempts bounded by time: past MONEY_DEADLINE_MS the creation ends OutcomeUnknown with its key (lib/provider.ts).
  const created = await providerCalls('general', { retry: creationRetry, idempotencyKey, scheduleToCloseTimeout: MONEY_DEADLINE_MS }).createPayout({ request, idempotencyKey, ...(approval ? { approval } : {}) });
  const payout = await followPayout(input.merOrderNo, created, timings);
  const shortfall = phaseOf('payout', payout.status) === 'failed' ? shortfallOf(payout.failureReason) : undefined;
  return shortfall === undefined ? payout : { ...payout, shortfall };
}

/**
 * docs/versioning.md: a payout whose `timings` break the rule (payoutTimingsErrors: a deadline above
 * 30 days or a wait above a day, or not a positive integer) fails ValidationFailed before any call;
 * before, it ran with them. `patched()` is called only when the timings break the rule.
 */
export const PAYOUT_TIMINGS_CHECKED_PATCH = 'payout-timings-checked';

/**
 * docs/versioning.md: a payout whose `extra` names a field outside PAYOUT_EXTRA_FIELDS fails
 * ValidationFailed before any call; before, it was sent. `patched()` is called only when it does.
 */
export const PAYOUT_EXTRA_ALLOWLISTED_PATCH = 'payout-extra-allowlisted';

/**
 * docs/versioning.md: a payout whose input holds an approval gate (a Nexus caller's above its
 * payoutApprovalAbove) waits for an operator's signed approval before anything is sent; before, no
 * input held one. `patched()` is asked only of such a payout.
 */
export const PAYOUT_APPROVAL_PATCH = 'payout-approval';

function sendPayoutErrors(input: SendPayoutFlowInput): FieldErrors {
  const { idempotencyKey, timings, approval, ...request } = input;
  const errors: FieldErrors = { ...createPayoutRequest.errors(request), ...payoutTimingsErrors(timings), ...payoutApprovalGateErrors(approval) };
  return idempotencyKey === undefined ? errors : { ...errors, ...keyErrors(idempotencyKey) };
}

// docs/versioning.md: waits days for the payout's terminal status: pinned, every build would have to run until its last payout ended; it moves to each new build and keeps markers and replay tests.
declareVersioning('AUTO_UPGRADE', sendPayout);
