/**
 * eSIM purchase and recharge: both charge the wallet under a durable idempotency key, so a
 * retry reconciles first (GET /operations/{key}, then the order it names) and POSTs again
 * only when the provider has no record of the key. Order reads for the waiting flow.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import type { EsimOrder, Operation } from '../provider/schemas';
import { FailureType } from '../shared/failures';
import { idempotencyConflict, postReconcilingFirst } from './idempotent-post';
import { providerCall } from './provider-call';

export type EsimOrderRequest =
  | { kind: 'purchase'; planNo: string; idempotencyKey: string }
  | { kind: 'recharge'; esimNo: string; idempotencyKey: string };

const OPERATION_TYPE = { purchase: 'ESIM_PURCHASE', recharge: 'ESIM_RECHARGE' } as const;

/** The provider's failure codes that a FAILED operation without an order can carry, as our failure types. */
const FAILURE_BY_REASON: Record<string, string> = {
  PLAN_UNAVAILABLE: FailureType.PlanUnavailable,
  INSUFFICIENT_FUNDS: FailureType.InsufficientFunds,
};

export function createEsimActivities({ provider }: { provider: ProviderClient }) {
  /** What an earlier attempt under the key left: its order, its definitive failure, or nothing yet. */
  async function reconcile(req: EsimOrderRequest, op: Operation): Promise<EsimOrder | undefined> {
    if (op.type !== OPERATION_TYPE[req.kind]) throw idempotencyConflict(req.idempotencyKey);
    if (op.orderNo) return assertOurs(req, await provider.getEsimOrder(op.orderNo));
    if (op.status === 'FAILED') throw earlierFailure(req.idempotencyKey, op.failureReason);
    // Accepted but no order yet: the POST under the same key answers IdempotencyInProgress until it has one.
    return undefined;
  }

  function place(req: EsimOrderRequest): Promise<EsimOrder> {
    const opts = { idempotencyKey: req.idempotencyKey };
    return req.kind === 'purchase' ? provider.purchaseEsim({ planNo: req.planNo }, opts) : provider.rechargeEsim({ esimNo: req.esimNo }, opts);
  }

  return {
    /** Charges the wallet once per key; answers the order as the provider has it (ISSUED, PAID, ISSUING or REFUNDED). */
    async placeEsimOrder(req: EsimOrderRequest): Promise<EsimOrder> {
      return providerCall(() =>
        postReconcilingFirst(provider, {
          idempotencyKey: req.idempotencyKey,
          reconcile: (earlier) => reconcile(req, earlier),
          post: () => place(req),
        }),
      );
    },

    async getEsimOrder({ orderNo }: { orderNo: string }): Promise<EsimOrder> {
      return providerCall(() => provider.getEsimOrder(orderNo));
    },
  };
}

/** An order found under our key must be for what we asked: the same plan, or the same eSIM. */
function assertOurs(req: EsimOrderRequest, order: EsimOrder): EsimOrder {
  const ours = req.kind === 'purchase' ? order.type === 'PURCHASE' && order.planNo === req.planNo : order.type === 'RECHARGE' && order.esimNo === req.esimNo;
  if (!ours) throw idempotencyConflict(req.idempotencyKey);
  return order;
}

function earlierFailure(idempotencyKey: string, reason: string | undefined): ApplicationFailure {
  return ApplicationFailure.create({
    type: (reason && FAILURE_BY_REASON[reason]) || FailureType.IdempotencyKeyTerminal,
    message: `the order under idempotency key ${idempotencyKey} definitively failed (${reason ?? 'no reason given'})`,
    nonRetryable: true,
    details: [{ failureReason: reason }],
  });
}
