/** eSIM endpoints: catalog, purchase, recharge, order lookup, usage. */
import { purchaseEsimRequest, rechargeEsimRequest, type FieldErrors } from '../../provider-api';
import { idempotent, validate, type ApiCall, type ApiHandlers } from '../api';
import { getOrder, orderView, placedOrderView, planView, purchase, recharge, usage, waitForIssuance } from '../domain/esim';
import { ESIM_PLANS } from '../fixtures';
import { ok } from '../errors';
import type { EsimOrderRecord } from '../state';
import type { KeyHandle } from '../idempotency';

/**
 * Charge, then wait a little for issuance. Replays of the key answer the order as it stands
 * now (same orderNo, no second charge); once refunded, the key is terminal.
 */
async function placeOrder(call: ApiCall, handle: KeyHandle | undefined, create: (key?: string, operationId?: string) => EsimOrderRecord) {
  const order = create(handle?.key, handle?.operationId);
  handle?.describe({ orderNo: order.orderNo, amount: order.amount });
  handle?.replayWith(() => ok(placedOrderView(call.sandbox, order)));
  // The Operation completes or fails with the order, not with this answer.
  handle?.keepProcessing();
  await waitForIssuance(call.sandbox, order);
  return ok(placedOrderView(call.sandbox, order));
}

export const esimRoutes = {
  listEsimPlans: () => ok(ESIM_PLANS.map(planView)),

  purchaseEsim: (call) => {
    const { data, key } = validate(call, purchaseEsimRequest);
    return idempotent(call, key, { failure: 'terminal', operationType: 'ESIM_PURCHASE' }, (handle) =>
      placeOrder(call, handle, (k, opId) => purchase(call.sandbox, data.planNo, k, opId)),
    );
  },

  rechargeEsim: (call) => {
    const { data, key } = validate(call, rechargeEsimRequest, (raw): FieldErrors => {
      const esim = typeof raw.esimNo === 'string' ? call.sandbox.state.esims.get(raw.esimNo) : undefined;
      return esim && raw.planNo !== undefined && raw.planNo !== esim.planNo ? { planNo: "must be the eSIM's current plan (no plan switching)" } : {};
    });
    return idempotent(call, key, { failure: 'terminal', operationType: 'ESIM_RECHARGE' }, (handle) =>
      placeOrder(call, handle, (k, opId) => recharge(call.sandbox, data.esimNo, k, opId)),
    );
  },

  getEsimOrder: (call) => ok(orderView(call.sandbox, getOrder(call.sandbox, call.params.orderNo))),

  getEsimUsage: (call) => ok(usage(call.sandbox, call.params.esimNo)),
} satisfies Partial<ApiHandlers>;
