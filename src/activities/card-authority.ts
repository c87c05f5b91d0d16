/**
 * Where a card action's authority is checked: in the activity that acts, before any provider call
 * (shared/card-capability.ts). The card workflow's validator already refused a request whose
 * capability is missing, misbound, expired or spent; here its signature is checked against the
 * workers' allow-list, and each action allowed leaves an audit record (who, which card, what, when)
 * that holds no card data: PCI DSS 10.2 asks for one per access to cardholder data.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { CapabilityError, type CardActionVerifier } from '../codec/card-capability';
import type { CardAction, CardCapability } from '../shared/card-capability';
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
