/**
 * Following a payout to its terminal status, for trackPayout (someone else's payout) and
 * sendPayout (ours): the payout's entity workflow tells it, from the PAYOUT_<STATUS> webhook or,
 * when that is late, its polls of GET /payouts/{merOrderNo}. FAILED and cancelled payouts are results (status
 * and failureReason in them), not workflow failures; only the deadline fails the flow.
 */
import { ApplicationFailure, condition, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { PayoutAnswer } from '../../provider/answers';
import { describeErrors, hasErrors } from '../../shared/card-rules';
import { payoutDecisionErrors, type ApprovedPayout, type PayoutAction, type PayoutApprovalGate, type PayoutApprovalState, type WithPayoutCapability } from '../../shared/card-capability';
import { FailureType } from '../../shared/failures';
import { approvePayoutUpdate, payoutApprovalQuery, rejectPayoutUpdate } from '../../shared/messages';
import { AWAITING_APPROVAL, PAYOUT_NOT_APPROVED, PROVIDER_STATUS } from '../../shared/search-attributes';
import { isFinal } from '../../shared/statuses';
import type { SendPayoutInput, WaitTimings } from '../../shared/types';
import { awaitOutcome, type AwaitOutcomeOptions } from './await-outcome';
import { applicationCause, failWith, providerCalls, unmeteredActivities } from './provider';

/** Bank transfers may take days: the default deadline is longer than other flows'. */
const DEFAULT_PAYOUT_DEADLINE_MS = 7 * 24 * 60 * 60 * 1000;

export function readPayout(merOrderNo: string): Promise<PayoutAnswer> {
  return providerCalls('general').getPayout({ merOrderNo });
}

/** How a follow waits: whose payout it is, and across continue-as-new its deadline and how it moves (lib/await-outcome.ts). */
export type FollowOptions = Pick<AwaitOutcomeOptions, 'notCreatedByUs' | 'deadlineAt' | 'rollOver'>;

/** The payout once terminal, starting from what the provider last said of it. */
export async function followPayout(merOrderNo: string, latest: PayoutAnswer, timings?: WaitTimings, options: FollowOptions = {}): Promise<PayoutAnswer> {
  const { notCreatedByUs = false } = options;
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: latest.status }]);
  if (isFinal('payout', latest.status)) return latest;
  const outcome = await awaitOutcome({ kind: 'payout', entityId: merOrderNo, timings: { deadlineMs: DEFAULT_PAYOUT_DEADLINE_MS, ...timings }, ...options });
  if (!outcome) {
    // Ours was created and may still pay out: the flow's open item follows it from here (docs/idempotency.md, "Open items").
    failWith(FailureType.PayoutTrackingTimedOut, `payout ${merOrderNo} had not reached a terminal status when the deadline passed`, [
      { merOrderNo, lastStatus: latest.status, ...(notCreatedByUs ? {} : { mayHaveTakenEffect: true }) },
    ]);
  }
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: outcome.status }]);
  // PAYOUT_<STATUS> webhooks carry the whole Payout order, as GET /payouts/{merOrderNo} does.
  return outcome.data as unknown as PayoutAnswer;
}

/**
 * A payout held for an operator's decision (docs/nexus.md, "Payouts that need an approval"): it sends
 * nothing to the provider until an approver's signed `approvePayout` arrives; a `rejectPayout`, or
 * none of either within `gate.waitMs` (a durable timer), ends the flow PayoutNotApproved with
 * nothing sent. A decision is checked twice before it counts: by the update's validator (bound to
 * this run, merOrderNo, amount and currency; a key among the approvers; unexpired), so a misbound
 * one never enters history, then by the worker (verifyPayoutDecision: the signature against the
 * allow-list), which writes the audit record. One decision at a time; the first that holds stands.
 */
export async function awaitPayoutApproval(payout: SendPayoutInput, gate: PayoutApprovalGate): Promise<ApprovedPayout> {
  const { workflowId, runId } = workflowInfo();
  const requestedAt = Date.now();
  const { merOrderNo, arriveAmount, arriveCurrency, paymentType } = payout;
  let state: PayoutApprovalState = {
    workflowId, runId, merOrderNo, arriveAmount, arriveCurrency, paymentType,
    payeeAccountEnd: String(payout.payeeAccountNo ?? '').slice(-4),
    caller: gate.caller, above: gate.above, state: 'awaiting', requestedAt, deadline: requestedAt + gate.waitMs,
  };
  let approved: WithPayoutCapability | undefined;
  let deciding = false;
  const expected = (action: PayoutAction) => ({ workflowId, runId, merOrderNo, arriveAmount, arriveCurrency, action, approvers: gate.approvers });
  const stillAwaiting = () => {
    if (state.state === 'awaiting') return;
    throw ApplicationFailure.create({ type: FailureType.InvalidState, message: `payout ${merOrderNo} is ${state.state} already${state.decidedBy ? ` (by ${state.decidedBy.sub}, key ${state.decidedBy.keyId})` : ''}: nothing changed`, nonRetryable: true, details: [{ workflowId, merOrderNo, state: state.state }] });
  };
  const validator = (action: PayoutAction) => (request: WithPayoutCapability) => {
    stillAwaiting();
    const errors = payoutDecisionErrors(request, { ...expected(action), now: Date.now() });
    if (hasErrors(errors)) throw ApplicationFailure.create({ type: FailureType.Unauthorized, message: `payout decision refused: ${describeErrors(errors)}`, nonRetryable: true, details: [{ errors, workflowId, merOrderNo, mayHaveTakenEffect: false }] });
  };
  const decide = (action: PayoutAction) => async (request: WithPayoutCapability): Promise<PayoutApprovalState> => {
    await condition(() => !deciding);
    stillAwaiting();
    deciding = true;
    try {
      const holder = await unmeteredActivities.verifyPayoutDecision({ decision: request, ...expected(action) }).catch((err: unknown) => {
        throw applicationCause(err) ?? err;
      });
      // Checked again: the timer may have fired while the worker checked.
      stillAwaiting();
      const note = request.note === undefined ? {} : { note: request.note };
      state = { ...state, state: action === 'approvePayout' ? 'approved' : 'rejected', decidedBy: { keyId: holder.keyId, sub: holder.sub, at: Date.now(), ...note } };
      if (action === 'approvePayout') approved = request;
      return state;
    } finally {
      deciding = false;
    }
  };
  setHandler(payoutApprovalQuery, () => state);
  setHandler(approvePayoutUpdate, decide('approvePayout'), { validator: validator('approvePayout') });
  setHandler(rejectPayoutUpdate, decide('rejectPayout'), { validator: validator('rejectPayout') });
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: AWAITING_APPROVAL }]);

  // A decision being checked when the time runs out arrived in time: its check decides.
  if (!(await condition(() => state.state !== 'awaiting', gate.waitMs))) await condition(() => !deciding);
  if (state.state === 'awaiting') state = { ...state, state: 'expired' };
  if (state.state === 'approved' && approved) return { decision: approved, approvers: gate.approvers };
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: PAYOUT_NOT_APPROVED }]);
  const why = state.state === 'rejected' ? `was rejected by ${state.decidedBy!.sub} (key ${state.decidedBy!.keyId})${state.decidedBy!.note ? `: ${state.decidedBy!.note}` : ''}` : `was not approved within ${Math.round(gate.waitMs / 60_000)} min`;
  return failWith(FailureType.PayoutNotApproved, `payout ${merOrderNo} (${arriveAmount} ${arriveCurrency}, above caller ${gate.caller}'s ${gate.above}) ${why}; nothing was sent to the provider`, [
    { merOrderNo, outcome: state.state, caller: gate.caller, ...(state.decidedBy ? { decidedBy: { keyId: state.decidedBy.keyId, sub: state.decidedBy.sub, at: new Date(state.decidedBy.at).toISOString() } } : {}), mayHaveTakenEffect: false },
  ]);
}
