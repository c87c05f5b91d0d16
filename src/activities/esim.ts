/**
 * eSIM purchase and recharge: both charge the wallet under a durable idempotency key, so a
 * retry reconciles first (GET /operations/{key}, then the order it names) and POSTs again
 * only when the provider has no record of the key. Order reads for the waiting flow.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import type { EsimOrderAnswer as EsimOrder, OperationAnswer as Operation } from '../provider/answers';
import { classifyMessage } from '../provider/errors';
import { FailureType, type FailureTypeName } from '../shared/failures';
import { phaseOf } from '../shared/statuses';
import { contradicts, fromOperation, idempotencyConflict, postReconcilingFirst } from './idempotent-post';
import { logExtraFields, providerCall } from './provider-call';

export type EsimOrderRequest =
  | { kind: 'purchase'; planNo: string; idempotencyKey: string }
  | { kind: 'recharge'; esimNo: string; idempotencyKey: string; extra?: Record<string, unknown> };

const OPERATION_TYPE = { purchase: 'ESIM_PURCHASE', recharge: 'ESIM_RECHARGE' } as const;

/** Reasons of a FAILED operation without an order that keep their own failure type. */
const REASON_TYPES: ReadonlySet<FailureTypeName> = new Set([FailureType.PlanUnavailable, FailureType.InsufficientFunds]);

export function createEsimActivities({ provider }: { provider: ProviderClient }) {
  /** What an earlier attempt under the key left: its order, its definitive failure, or nothing yet. */
  async function reconcile(req: EsimOrderRequest, op: Operation): Promise<EsimOrder | undefined> {
    if (contradicts(op, { type: OPERATION_TYPE[req.kind] })) throw idempotencyConflict(req.idempotencyKey);
    if (op.orderNo) return assertOurs(req, await provider.getEsimOrder(op.orderNo));
    if (phaseOf('operation', op.status) === 'failed') throw earlierFailure(req.idempotencyKey, op.failureReason);
    // No order shown (the spec shows only the status): the POST under the same key answers the
    // same order with no second charge, or IdempotencyInProgress until there is one.
    return undefined;
  }

  function place(req: EsimOrderRequest): Promise<EsimOrder> {
    const opts = { idempotencyKey: req.idempotencyKey };
    if (req.kind === 'purchase') return provider.purchaseEsim({ planNo: req.planNo }, opts);
    logExtraFields('rechargeEsim', req.extra);
    return provider.rechargeEsim({ esimNo: req.esimNo, ...(req.extra === undefined ? {} : { extra: req.extra }) }, opts);
  }

  return {
    /** Charges the wallet once per key; answers the order as the provider has it (ISSUED, PAID, ISSUING or REFUNDED). */
    async placeEsimOrder(req: EsimOrderRequest): Promise<EsimOrder> {
      return providerCall(() =>
        postReconcilingFirst({
          idempotencyKey: req.idempotencyKey,
          recall: fromOperation(provider, req.idempotencyKey, (earlier) => reconcile(req, earlier)),
          post: () => place(req),
        }),
      );
    },

    async getEsimOrder({ orderNo }: { orderNo: string }): Promise<EsimOrder> {
      return providerCall(() => provider.getEsimOrder(orderNo));
    },

    /** Shape not shown: the provider's record, whole. */
    async getEsimUsage({ esimNo }: { esimNo: string }): Promise<Record<string, unknown>> {
      return providerCall(() => provider.getEsimUsage(esimNo));
    },

    async listEsimPlans(): Promise<Array<Record<string, unknown>>> {
      return providerCall(() => provider.listEsimPlans());
    },
  };
}

/** An order found under our key must be for what we asked: the same plan, or the same eSIM. */
function assertOurs(req: EsimOrderRequest, order: EsimOrder): EsimOrder {
  const ours = req.kind === 'purchase' ? { type: 'PURCHASE', planNo: req.planNo } : { type: 'RECHARGE', esimNo: req.esimNo };
  if (contradicts(order, ours)) throw idempotencyConflict(req.idempotencyKey);
  return order;
}

function earlierFailure(idempotencyKey: string, reason: string | undefined): ApplicationFailure {
  return ApplicationFailure.create({
    type: reasonType(reason) ?? FailureType.IdempotencyKeyTerminal,
    message: `the order under idempotency key ${idempotencyKey} definitively failed (${reason ?? 'no reason given'})`,
    nonRetryable: true,
    details: [{ failureReason: reason }],
  });
}

function reasonType(reason: string | undefined): FailureTypeName | undefined {
  const type = reason === undefined ? undefined : classifyMessage(reason);
  return type !== undefined && REASON_TYPES.has(type) ? type : undefined;
}
