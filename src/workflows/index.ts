/** Every workflow the worker registers (CONTRACTS §7 plus the entity workflows the bridge signals). */
export { issueCard } from './issue-card';
export { fundCard } from './fund-card';
export { withdrawFromCard } from './withdraw-from-card';
export { cardLifecycle } from './card-lifecycle';
export { providerEntity } from './provider-entity';
export { onboardCardholder } from './onboard-cardholder';
export { purchaseEsim } from './purchase-esim';
export { rechargeEsim } from './recharge-esim';
export { trackPayout } from './track-payout';
export { sendPayout } from './send-payout';
export { walletBalance, esimPlans } from './provider-reads';
// Under their schedules' names (CONTRACTS §9), and under the names they had before, so runs and
// schedules made then still find their workflow (RECONCILIATIONS' formerWorkflowType).
export { reconcileMoney as 'reconcile-money', reconcileMoney } from './reconciliation/reconcile-money';
export { reconcileCards as 'reconcile-cards', reconcileCards } from './reconciliation/reconcile-cards';
export { refreshBins as 'refresh-bins', refreshBins } from './reconciliation/refresh-bins';
export { sweepStuck as 'sweep-stuck', sweepStuck } from './reconciliation/sweep-stuck';
