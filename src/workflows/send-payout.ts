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
 *
 * Pinned to its build; once the payout is created, a changed target build moves its follow by a
 * continue-as-new that carries the created payout and the deadline (lib/roll-over.ts): the next run
 * neither asks for approval nor posts again.
 */
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { PayoutAnswer } from '../provider/answers';
import { createPayoutRequest } from '../provider-api/payouts';
import { describeErrors, hasErrors, keyErrors, payoutTimingsErrors } from '../shared/card-rules';
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
import { carriedFieldErrors, carriedOver, rollOverWith } from './lib/roll-over';

/** A payout's creation is not given up on for a count of attempts: only its deadline ends it. */
const creationRetry = { maximumAttempts: Number.POSITIVE_INFINITY, maximumInterval: '20 seconds' } as const;

/**
 * The flow's input: the payout, and when our Nexus handler holds it for an operator's approval, the
 * gate; across a continue-as-new onto a new build, the payout as created and the follow's deadline.
 */
export type SendPayoutFlowInput = SendPayoutInput & { approval?: PayoutApprovalGate; following?: { created: PayoutAnswer; deadlineAt: number } };

export async function sendPayout(input: SendPayoutFlowInput): Promise<PayoutAnswer> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'sendPayout' }]);
  const errors = sendPayoutErrors(input ?? ({} as SendPayoutFlowInput));
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid payout: ${describeErrors(errors)}`, [{ errors }]);

  const { idempotencyKey: givenKey, timings: _timings, approval: gate, following: _carried, ...request } = input;
  const following = carriedOver(input.following);
  if (following) return follow(input, following.created, following.deadlineAt);
  const approval = gate === undefined ? undefined : await awaitPayoutApproval(input, gate);
  // The activity looks the payout up by merOrderNo before any POST, so even a key changed under a
  // running flow could not create a second payout.
  const idempotencyKey = givenKey ?? idempotencyKeyFor('payout', workflowInfo().workflowId);
  // Attempts bounded by time: past MONEY_DEADLINE_MS the creation ends OutcomeUnknown with its key (lib/provider.ts).
  const created = await providerCalls('general', { retry: creationRetry, idempotencyKey, scheduleToCloseTimeout: MONEY_DEADLINE_MS }).createPayout({ request, idempotencyKey, ...(approval ? { approval } : {}) });
  return follow(input, created);
}

/** The created payout followed to its terminal status; a FAILED one says how much the wallet was missing. */
async function follow(input: SendPayoutFlowInput, created: PayoutAnswer, deadlineAt?: number): Promise<PayoutAnswer> {
  const { following: _carried, ...asked } = input;
  const payout = await followPayout(input.merOrderNo, created, input.timings, {
    deadlineAt,
    rollOver: (at) => rollOverWith<typeof sendPayout>({ ...asked, following: { created, deadlineAt: at } }),
  });
  const shortfall = phaseOf('payout', payout.status) === 'failed' ? shortfallOf(payout.failureReason) : undefined;
  return shortfall === undefined ? payout : { ...payout, shortfall };
}

function sendPayoutErrors(input: SendPayoutFlowInput): FieldErrors {
  const { idempotencyKey, timings, approval, following: _carried, ...request } = input;
  const errors: FieldErrors = { ...createPayoutRequest.errors(request), ...payoutTimingsErrors(timings), ...payoutApprovalGateErrors(approval), ...carriedFieldErrors(input, 'following', 'a payout') };
  return idempotencyKey === undefined ? errors : { ...errors, ...keyErrors(idempotencyKey) };
}

// docs/versioning.md: waits days for the payout's terminal status, pinned to each run's build; moves to a new build at a continue-as-new while it waits (lib/roll-over.ts).
declareVersioning('PINNED', sendPayout);
