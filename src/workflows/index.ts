/** Every workflow the worker registers (CONTRACTS §7 plus the entity workflows the bridge signals). */
import { markingUnknownOutcome } from './lib/outcome-unknown';
import { issueCard as issueCardFlow } from './issue-card';
import { fundCard as fundCardFlow } from './fund-card';
import { withdrawFromCard as withdrawFromCardFlow } from './withdraw-from-card';
import { onboardCardholder as onboardCardholderFlow } from './onboard-cardholder';
import { purchaseEsim as purchaseEsimFlow } from './purchase-esim';
import { rechargeEsim as rechargeEsimFlow } from './recharge-esim';
import { sendPayout as sendPayoutFlow } from './send-payout';

// The flows that can end OutcomeUnknown mark themselves so as they fail (lib/outcome-unknown.ts;
// the list: OUTCOME_UNKNOWN_FLOWS in shared/outcome-unknown.ts). The export's name is the workflow type.
const issueCard = markingUnknownOutcome(issueCardFlow);
const fundCard = markingUnknownOutcome(fundCardFlow);
const withdrawFromCard = markingUnknownOutcome(withdrawFromCardFlow);
const onboardCardholder = markingUnknownOutcome(onboardCardholderFlow);
const purchaseEsim = markingUnknownOutcome(purchaseEsimFlow);
const rechargeEsim = markingUnknownOutcome(rechargeEsimFlow);
const sendPayout = markingUnknownOutcome(sendPayoutFlow);

export { issueCard, fundCard, withdrawFromCard, onboardCardholder, purchaseEsim, rechargeEsim, sendPayout };
export { cardLifecycle } from './card-lifecycle';
export { providerEntity } from './provider-entity';
export { trackPayout } from './track-payout';
export { walletBalance, esimPlans, cardBins, operationRecord } from './provider-reads';
// Under their schedules' names (CONTRACTS §9), and under the names they had before, so runs and
// schedules made then still find their workflow (RECONCILIATIONS' formerWorkflowType).
export { reconcileMoney as 'reconcile-money', reconcileMoney } from './reconciliation/reconcile-money';
export { reconcileCards as 'reconcile-cards', reconcileCards } from './reconciliation/reconcile-cards';
export { refreshBins as 'refresh-bins', refreshBins } from './reconciliation/refresh-bins';
export { sweepStuck as 'sweep-stuck', sweepStuck } from './reconciliation/sweep-stuck';
export { settleOutcome } from './settle-outcome';
export { openItem } from './open-item';
export { moneyAttempt } from './money-attempt';
