/**
 * eSIM purchase and recharge: both charge the wallet. Order reads for the waiting flow.
 *
 * | case | POST /esim/purchase (idempotent by the spec: key "strongly recommended", durable) | POST /esim/recharge (no key in the spec's idempotency table) |
 * |---|---|---|
 * | key | the caller's, else derived from the workflow ID (`esim`) | the same (`esimrc`), sent, but not relied on |
 * | retry, crash, 5xx, timeout | GET /operations/{key} first, then the order it names; no record: POST again under the same key | GET /operations/{key} first; no record: not posted again, OutcomeUnknown |
 * | answer cut off | the same, at once | the same, at once |
 * | operation shown without orderNo | POST again under the key: the spec answers the same orderNo, no second charge | OutcomeUnknown: charged, order not learnable |
 * | restart after a deploy | an earlier run's key found under GET /operations is continued (earlier-key.ts) | the same |
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ProviderClient } from '../provider/client';
import type { EsimOrderAnswer as EsimOrder, OperationAnswer as Operation } from '../provider/answers';
import { classifyMessage } from '../provider/errors';
import { FailureType, type FailureTypeName } from '../shared/failures';
import { phaseOf } from '../shared/statuses';
import { operationOfEarlierRun, type KeyOrigin } from './earlier-key';
import { anEarlierRunScheduled } from './earlier-runs';
import { contradicts, fromOperation, idempotencyConflict, outcomeUnknown, postReconcilingFirst } from './idempotent-post';
import { providerCall } from './provider-call';

export type EsimOrderRequest = (
  | { kind: 'purchase'; planNo: string; idempotencyKey: string }
  | { kind: 'recharge'; esimNo: string; idempotencyKey: string }
) & { keyOrigin?: KeyOrigin };

const ENDPOINT = { purchase: 'POST /esim/purchase', recharge: 'POST /esim/recharge' } as const;

/** Reasons of a FAILED operation without an order that keep their own failure type. */
const REASON_TYPES: ReadonlySet<FailureTypeName> = new Set([FailureType.PlanUnavailable, FailureType.InsufficientFunds]);

export function createEsimActivities({ provider, temporal }: { provider: ProviderClient; temporal: Client }) {
  /** What an earlier attempt under the key left: its order, its definitive failure, or nothing yet. */
  async function reconcile(req: EsimOrderRequest, op: Operation): Promise<EsimOrder | undefined> {
    if (op.orderNo) return assertOurs(req, await provider.getEsimOrder(op.orderNo));
    if (phaseOf('operation', op.status) === 'failed') throw earlierFailure(req.idempotencyKey, op.failureReason);
    // No order shown (the spec shows only the status). A purchase: the POST under the same key
    // answers the same order with no second charge, or IdempotencyInProgress until there is one.
    // A recharge may not be posted again: the provider knows the charge, we cannot learn its order.
    if (req.kind === 'recharge') throw outcomeUnknown({ idempotencyKey: req.idempotencyKey, endpoint: ENDPOINT.recharge }, `the provider records the charge (${op.status}) but shows no order number`, { status: op.status });
    return undefined;
  }

  async function placeUnder(req: EsimOrderRequest): Promise<EsimOrder> {
    return postReconcilingFirst({
      idempotencyKey: req.idempotencyKey,
      endpoint: ENDPOINT[req.kind],
      idempotentBySpec: req.kind === 'purchase',
      recall: fromOperation(provider, req.idempotencyKey, (earlier) => reconcile(req, earlier)),
      post: () => place(req),
    });
  }

  function place(req: EsimOrderRequest): Promise<EsimOrder> {
    const opts = { idempotencyKey: req.idempotencyKey };
    return req.kind === 'purchase' ? provider.purchaseEsim({ planNo: req.planNo }, opts) : provider.rechargeEsim({ esimNo: req.esimNo }, opts);
  }

  return {
    /** Charges the wallet once per key; answers the order as the provider has it (ISSUED, PAID, ISSUING or REFUNDED). */
    async placeEsimOrder(req: EsimOrderRequest): Promise<EsimOrder> {
      return providerCall(async () => {
        const earlier = await operationOfEarlierRun(temporal, provider, req);
        if (!earlier && req.kind === 'recharge' && (await anEarlierRunScheduled(temporal, 'placeEsimOrder'))) {
          // Posted at most once per unknown outcome, across runs too: an earlier run of this workflow ID
          // sent it, and under its key the provider shows nothing (the spec promises no record).
          const known = await fromOperation(provider, req.idempotencyKey, (op) => reconcile(req, op))();
          if (known) return known;
          throw outcomeUnknown({ idempotencyKey: req.idempotencyKey, endpoint: ENDPOINT.recharge }, 'an earlier run of this workflow ID sent it and the provider shows no record of it');
        }
        if (!earlier) return placeUnder(req);
        // A restart whose earlier run charged under another key: that key's order, or its POST again (purchase only).
        const adopted = { ...req, idempotencyKey: earlier.idempotencyKey };
        return (await reconcile(adopted, earlier.operation)) ?? placeUnder(adopted);
      });
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

/**
 * An order found under our key must be for what we asked, as far as the spec's order fields show
 * it: a recharge renews one eSIM (`esimNo`). The spec shows no plan and no type on an order, so a
 * purchase's order is compared with nothing.
 */
function assertOurs(req: EsimOrderRequest, order: EsimOrder): EsimOrder {
  if (req.kind === 'recharge' && contradicts(order, { esimNo: req.esimNo })) throw idempotencyConflict(req.idempotencyKey, 'esimNo');
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
