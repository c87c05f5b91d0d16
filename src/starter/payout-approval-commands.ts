/**
 * A Nexus caller's payout above its payoutApprovalAbove waits for a person (docs/nexus.md, "Payouts
 * that need an approval"): these commands are that person's.
 *
 * - `payouts-awaiting`: the payouts waiting, oldest first (ProviderStatus AWAITING_APPROVAL, each
 *   read through its flow's `payoutApproval` query).
 * - `payout-approve REF [--note TEXT]`, `payout-reject REF [--note TEXT]`: REF is the payout's
 *   workflow ID (`send-payout/…`) or its merOrderNo (as the flow holds it: a caller's is scoped,
 *   `<caller>_<merOrderNo>`). The decision is signed with the operator's CARD_ACTION_SIGNING_KEY,
 *   bound to the flow's run, merOrderNo, amount and currency and to the note; the flow refuses it
 *   unless that key is among the caller's payoutApprovers and the workers' CARD_ACTION_TRUSTED_KEYS.
 *
 * Exit: 0 decided (the payout is then sent, or ends PayoutNotApproved); 1 refused (Unauthorized: a
 * key the payout does not take; InvalidState: decided before or expired); 2 no payout awaiting
 * approval by that reference, or bad flags.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { CardActionSigner } from '../codec/card-capability';
import { PAYOUT_NOTE_MAX, type PayoutAction, type PayoutApprovalState } from '../shared/card-capability';
import { approvePayoutUpdate, payoutApprovalQuery, rejectPayoutUpdate } from '../shared/messages';
import { AWAITING_APPROVAL } from '../shared/search-attributes';
import { toCardIssuingError } from '../client';
import { UsageError, flag, type Flags } from './args';
import { str, type Command, type CommandContext, type CommandOutcome } from './command-kit';
import { renderFields, renderTable } from './output';

interface DecisionPlan {
  ref: string;
  note?: string;
}

/** Every payout of the task queue waiting for a decision, with where each stands. */
async function awaitingPayouts(client: Client, taskQueue: string): Promise<PayoutApprovalState[]> {
  const query = `TaskQueue = '${taskQueue}' AND WorkflowType = 'sendPayout' AND ExecutionStatus = 'Running' AND ProviderStatus = '${AWAITING_APPROVAL}'`;
  const states: PayoutApprovalState[] = [];
  for await (const flow of client.workflow.list({ query })) {
    // Decided or expired since the listing (visibility trails): not awaiting any more.
    const state = await client.workflow.getHandle(flow.workflowId, flow.runId).query(payoutApprovalQuery).catch(() => undefined);
    if (state?.state === 'awaiting') states.push(state);
  }
  return states.sort((a, b) => a.requestedAt - b.requestedAt);
}

/** The payout REF names, waiting for a decision: by workflow ID, else by merOrderNo among those awaiting. */
async function payoutNamed(client: Client, taskQueue: string, ref: string): Promise<PayoutApprovalState> {
  if (ref.startsWith('send-payout/')) {
    try {
      return await client.workflow.getHandle(ref).query(payoutApprovalQuery);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new UsageError(`no payout flow ${ref}`);
      throw new UsageError(`${ref} holds no payout awaiting approval (${(err as Error).message})`);
    }
  }
  const matches = (await awaitingPayouts(client, taskQueue)).filter((p) => p.merOrderNo === ref);
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) throw new UsageError(`merOrderNo "${ref}" names several payouts awaiting approval (${matches.map((m) => m.workflowId).join(', ')}): decide each by its workflow ID`);
  throw new UsageError(`no payout awaiting approval on ${taskQueue} has the workflow ID or merOrderNo "${ref}" (a caller's merOrderNo is scoped: <caller>_<merOrderNo>; payouts-awaiting lists them)`);
}

function decision(action: PayoutAction): Command<DecisionPlan> {
  const verb = action === 'approvePayout' ? 'approve' : 'reject';
  return {
    usage: `payout-${verb} REF [--note TEXT]   (REF: the payout's workflow ID or merOrderNo; signed with CARD_ACTION_SIGNING_KEY)`,
    description: verb === 'approve'
      ? 'Approve a payout held for approval, signed with CARD_ACTION_SIGNING_KEY: it is then sent to the provider.'
      : 'Reject a payout held for approval, signed with CARD_ACTION_SIGNING_KEY: nothing is sent, it ends PayoutNotApproved.',
    example: `payout-${verb} payments_PO-2026-0001 --note "${verb === 'approve' ? 'OPS-45: payee verified' : 'OPS-46: payee not verified'}"`,
    options: { note: str },
    positional: 'REF',
    parse(flags: Flags, positional: string | undefined) {
      if (!positional) throw new UsageError("REF is required: the payout's workflow ID (send-payout/…) or merOrderNo (payouts-awaiting lists them)");
      const note = flag(flags, 'note');
      if (note !== undefined && (note.length > PAYOUT_NOTE_MAX || /[\u0000-\u001f\u007f]/.test(note))) throw new UsageError(`--note must be text of at most ${PAYOUT_NOTE_MAX} characters, without control characters`);
      return { ref: positional, ...(note === undefined ? {} : { note }) };
    },
    async run(plan, ctx) {
      const { client, taskQueue } = (await ctx.client()).temporal;
      const payout = await payoutNamed(client, taskQueue, plan.ref);
      ctx.following(payout.workflowId);
      const signer = new CardActionSigner(ctx.config().cardActions.signing);
      const { runId, merOrderNo, arriveAmount, arriveCurrency } = payout;
      const request = signer.decidePayout(payout.workflowId, action, { runId, merOrderNo, arriveAmount, arriveCurrency, ...(plan.note === undefined ? {} : { note: plan.note }) });
      ctx.progress(`${verb === 'approve' ? 'approving' : 'rejecting'} ${merOrderNo} (${arriveAmount} ${arriveCurrency}, caller ${payout.caller}) as ${signer.subject} (key ${signer.keyId})`);
      let decided: PayoutApprovalState;
      try {
        decided = await client.workflow.getHandle(payout.workflowId, runId).executeUpdate(action === 'approvePayout' ? approvePayoutUpdate : rejectPayoutUpdate, { args: [request] });
      } catch (err) {
        throw toCardIssuingError(err, { workflowId: payout.workflowId });
      }
      return decidedOutcome(decided, ctx);
    },
  };
}

function decidedOutcome(p: PayoutApprovalState, ctx: CommandContext): CommandOutcome {
  const next = p.state === 'approved' ? `the payout is being sent: npm run starter -- status ${p.workflowId}` : 'the payout ends PayoutNotApproved: nothing was sent to the provider';
  ctx.progress(next);
  return {
    ok: true,
    workflowId: p.workflowId,
    result: p,
    text: renderFields({ workflowId: p.workflowId, merOrderNo: p.merOrderNo, amount: `${p.arriveAmount} ${p.arriveCurrency}`, caller: p.caller, state: p.state, by: `${p.decidedBy?.sub} (key ${p.decidedBy?.keyId})`, at: new Date(p.decidedBy?.at ?? 0).toISOString(), ...(p.decidedBy?.note ? { note: p.decidedBy.note } : {}) }),
  };
}

const payoutsAwaiting: Command<Record<string, never>> = {
  usage: 'payouts-awaiting',
  description: 'List the Nexus callers\' payouts held for an operator\'s approval, oldest first.',
  example: 'payouts-awaiting',
  options: {},
  parse: () => ({}),
  async run(_plan, ctx) {
    const { client, taskQueue } = (await ctx.client()).temporal;
    const payouts = await awaitingPayouts(client, taskQueue);
    const rows = payouts.map((p) => ({
      workflowId: p.workflowId,
      merOrderNo: p.merOrderNo,
      amount: `${p.arriveAmount} ${p.arriveCurrency}`,
      payee: `…${p.payeeAccountEnd}`,
      caller: p.caller,
      above: p.above,
      since: new Date(p.requestedAt).toISOString(),
      deadline: new Date(p.deadline).toISOString(),
    }));
    return { ok: true, result: { payouts }, text: payouts.length === 0 ? 'no payout awaits approval' : renderTable(rows, ['workflowId', 'merOrderNo', 'amount', 'payee', 'caller', 'above', 'since', 'deadline']) };
  },
};

export const PAYOUT_APPROVAL_COMMANDS: Record<string, Command<any>> = {
  'payouts-awaiting': payoutsAwaiting,
  'payout-approve': decision('approvePayout'),
  'payout-reject': decision('rejectPayout'),
};
