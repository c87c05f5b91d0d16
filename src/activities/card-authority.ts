/**
 * Where a card action's authority is checked: in the activity that acts, before any provider call
 * (shared/card-capability.ts). The card workflow's validator already refused a request whose
 * capability is missing, misbound, expired or spent; here its signature is checked against the
 * workers' allow-list, and each action allowed leaves an audit record (who, which card, what, when)
 * that holds no card data: PCI DSS 10.2 asks for one per access to cardholder data.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { CapabilityError, type CapabilityHolder, type CardActionVerifier } from '../codec/card-capability';
import type { CardAction, CardCapability, WithPayoutCapability } from '../shared/card-capability';
import { FailureType } from '../shared/failures';
import { entityWorkflowId } from '../shared/ids';

/** Throws Unauthorized (not retried: a signature does not heal) unless `capability` allows `action` on `cardId` with `args`. */
export function requireCapability(verifier: CardActionVerifier, cardId: string, action: CardAction, args: object, capability: CardCapability | undefined): void {
  const ctx = Context.current();
  const where = { cardId, action, workflowId: ctx.info.workflowExecution?.workflowId };
  try {
    // Only the card's own workflow acts on it: one started under another ID for the same card keeps no record of the nonces this one spent.
    if (where.workflowId !== entityWorkflowId('card', cardId)) throw new CapabilityError(`card action refused: ${action} of card ${cardId} was asked of ${where.workflowId ?? 'no workflow'}, not of card/${cardId}`);
    const holder = verifier.verify({ ...args, capability }, { cardId, action });
    ctx.log.info('card action authorised', { audit: 'card-action', ...where, keyId: holder.keyId, sub: holder.sub, nonce: holder.nonce, at: new Date().toISOString() });
  } catch (err) {
    if (!(err instanceof CapabilityError)) throw err;
    ctx.log.warn('card action refused', { audit: 'card-action', ...where, keyId: capability?.keyId, sub: capability?.sub, reason: err.message });
    throw ApplicationFailure.create({
      type: FailureType.Unauthorized,
      message: capability === undefined ? `card action refused: ${action} of card ${cardId} carries no capability (accepted before capabilities were required); send it again with a current client` : err.message,
      nonRetryable: true,
      details: [{ cardId, action, mayHaveTakenEffect: false }],
    });
  }
}

/**
 * Where an operator's decision on a payout held for approval is checked (shared/card-capability.ts,
 * "Payout approvals"): in the payout's own workflow, as it accepts the decision, and again in the
 * activity that posts the payout, before any provider call. The flow's validator already refused a
 * decision misbound or expired or from a key that is not among the payout's approvers; here its
 * signature is checked against the workers' allow-list, and each decision leaves an audit record
 * (who, which payout, what, when). Throws Unauthorized (not retried) otherwise; `mayHaveTakenEffect`:
 * an earlier attempt of the same call may have posted (the allow-list changed between attempts).
 */
export function requirePayoutDecision(
  verifier: CardActionVerifier,
  request: WithPayoutCapability | undefined,
  expected: Parameters<CardActionVerifier['verifyPayout']>[1],
  opts: { step: string; mayHaveTakenEffect?: boolean } = { step: 'decision' },
): CapabilityHolder {
  const ctx = Context.current();
  const where = { workflowId: expected.workflowId, runId: expected.runId, action: expected.action, merOrderNo: expected.merOrderNo, arriveAmount: expected.arriveAmount, arriveCurrency: expected.arriveCurrency, step: opts.step };
  try {
    // Only the payout's own flow acts on its decision: one copied into another flow's activity names another workflow.
    if (ctx.info.workflowExecution?.workflowId !== expected.workflowId) throw new CapabilityError(`payout decision refused: made for ${expected.workflowId}, asked of ${ctx.info.workflowExecution?.workflowId ?? 'no workflow'}`);
    const holder = verifier.verifyPayout(request, expected);
    ctx.log.info(`payout ${expected.action === 'approvePayout' ? 'approval' : 'rejection'} verified`, { audit: 'payout-decision', ...where, keyId: holder.keyId, sub: holder.sub, nonce: holder.nonce, ...(request?.note ? { note: request.note } : {}), at: new Date().toISOString() });
    return holder;
  } catch (err) {
    if (!(err instanceof CapabilityError)) throw err;
    ctx.log.warn('payout decision refused', { audit: 'payout-decision', ...where, keyId: request?.capability?.keyId, sub: request?.capability?.sub, reason: err.message });
    throw ApplicationFailure.create({
      type: FailureType.Unauthorized,
      message: err.message,
      nonRetryable: true,
      details: [{ workflowId: expected.workflowId, merOrderNo: expected.merOrderNo, action: expected.action, mayHaveTakenEffect: opts.mayHaveTakenEffect === true }],
    });
  }
}
