/**
 * eSIM purchase and recharge: both charge the wallet. Order reads for the waiting flow.
 *
 * | case | POST /esim/purchase (idempotent by the spec: key "strongly recommended", durable) | POST /esim/recharge (no key in the spec's idempotency table) |
 * |---|---|---|
 * | key | the caller's, else derived from the workflow ID (`esim`) | the same (`esimrc`), sent, but not relied on |
 * | retry, crash, 5xx, timeout | GET /operations/{key} first, then the order it names; no record: POST again under the same key | GET /operations/{key} first; no record: not posted again, OutcomeUnknown |
 * | re-scheduled after a 429 (attempt 1 of a new activity) | `sentBefore` from the workflow: reconciles first, as a retry | the same: never posted again without a record that says it did not happen |
 * | answer cut off | the same, at once | the same, at once |
 * | order under the key shows our plan | ours | (esimNo) ours |
 * | order shows another plan (or eSIM) | IdempotencyConflict, nothing charged | IdempotencyConflict |
 * | order does not show the plan (the spec shows none) | POST again under the key: the same orderNo, or 409 for another body (IdempotencyConflict) | OutcomeUnknown: cannot be confirmed, not posted again |
 * | operation shown without orderNo | POST again under the key: the spec answers the same orderNo, no second charge | OutcomeUnknown: charged, order not learnable |
 * | 409 we cannot read | in progress: the retry reconciles, then asks again, until the charge deadline (OutcomeUnknown) | the same |
 * | a read after a call that may have charged fails (403, 404 on the order it names) | OutcomeUnknown with the key, `mayHaveTakenEffect: true`; 5xx and 429 are retried, reconciling first | the same |
 * | restart after a deploy | an earlier run's key found under GET /operations is continued (earlier-key.ts), confirmed as any recalled order | the same; an earlier run that sent it makes the restart reconcile first |
 * | the flow cannot say what moved (charge deadline, order still PAID at the issuance deadline, a read refused after the charge, cancelled, terminated) | `mayHaveTakenEffect: true` and an open item, asked under every key it could have used (or the order it names) until the provider's final word or an operator's `settle` | the same, but the provider's silence under our key proves nothing: only a record, or the operator's `--found`, closes it |
 */
import { recordAttemptOfRun, tellAttemptLearned, type AttemptDeps } from './attempts';
import { ApplicationFailure } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import type { EsimOrderAnswer as EsimOrder, OperationAnswer as Operation } from '../provider/answers';
import { classifyMessage } from '../provider/classification';
import { FailureType, type FailureTypeName } from '../shared/failures';
import { phaseOf } from '../shared/statuses';
import { operationOfEarlierRun, type KeyOrigin } from './earlier-key';
import { anEarlierRunScheduled } from './earlier-runs';
import { contradicts, fromOperation, idempotencyConflict, outcomeUnknown, postReconcilingFirst, type Recalled } from './idempotent-post';
import { logExtraFields, providerCall } from './provider-call';

export type EsimOrderRequest = (
  | { kind: 'purchase'; planNo: string; idempotencyKey: string }
  | { kind: 'recharge'; esimNo: string; idempotencyKey: string; extra?: Record<string, unknown> }
) & { keyOrigin?: KeyOrigin; sentBefore?: boolean };

const ENDPOINT = { purchase: 'POST /esim/purchase', recharge: 'POST /esim/recharge' } as const;

/** Reasons of a FAILED operation without an order that keep their own failure type. */
const REASON_TYPES: ReadonlySet<FailureTypeName> = new Set([FailureType.PlanUnavailable, FailureType.InsufficientFunds]);

export function createEsimActivities({ provider, temporal, openItemMinAskMs }: { provider: ProviderClient } & AttemptDeps) {
  /** What an earlier attempt under the key left: its order (and whether it shows it is ours), its definitive failure, or nothing yet. */
  async function reconcile(req: EsimOrderRequest, op: Operation): Promise<Recalled<EsimOrder> | undefined> {
    if (op.orderNo) return ownership(req, await provider.getEsimOrder(op.orderNo));
    if (phaseOf('operation', op.status) === 'failed') throw earlierFailure(req.idempotencyKey, op.failureReason);
    // No order shown (the spec shows only the status). A purchase: the POST under the same key
    // answers the same order with no second charge, or IdempotencyInProgress until there is one.
    // A recharge may not be posted again: the provider knows the charge, we cannot learn its order.
    if (req.kind === 'recharge') throw outcomeUnknown({ idempotencyKey: req.idempotencyKey, endpoint: ENDPOINT.recharge }, `the provider records the charge (${op.status}) but shows no order number`, { status: op.status });
    return undefined;
  }

  /**
   * Posts under the key, reconciling first when an earlier attempt, re-scheduling or run may have
   * sent it. `recall` defaults to GET /operations/{key}; a restart passes the record it found.
   */
  function placeUnder(req: EsimOrderRequest, sentBefore: boolean, recall = fromOperation(provider, req.idempotencyKey, (earlier) => reconcile(req, earlier))): Promise<EsimOrder> {
    return postReconcilingFirst({
      idempotencyKey: req.idempotencyKey,
      endpoint: ENDPOINT[req.kind],
      idempotentBySpec: req.kind === 'purchase',
      sentBefore,
      recall,
      // The wallet may be charged from here on: recorded first, so no stop of the flow loses it (issue 51).
      beforeSend: () => recordAttemptOfRun({ temporal, openItemMinAskMs }, { idempotencyKey: req.idempotencyKey }),
      // Its item, should the flow stop before it records the order, asks about this order.
      post: async () => {
        const order = await place(req);
        if (order.orderNo) await tellAttemptLearned(temporal, { orderNo: order.orderNo });
        return order;
      },
    });
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
      return providerCall(async () => {
        const earlier = await operationOfEarlierRun(temporal, provider, req, 'placeEsimOrder');
        if (earlier) {
          // A restart whose earlier run charged under another key: that key's order, confirmed as any recalled one.
          const adopted = { ...req, idempotencyKey: earlier.idempotencyKey };
          const { operation } = earlier;
          return placeUnder(adopted, true, operation ? () => reconcile(adopted, operation) : undefined);
        }
        // Posted at most once per unknown outcome, across runs too: an earlier run of this workflow ID may have sent it.
        const sentByEarlierRun = req.kind === 'recharge' && (await anEarlierRunScheduled(temporal, 'placeEsimOrder'));
        return placeUnder(req, req.sentBefore === true || sentByEarlierRun);
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
 * An order found under our key is ours when it shows what we asked: a recharge renews one eSIM
 * (`esimNo`), a purchase buys one plan (`planNo`, which the spec does not show on an order: a
 * provider that does not show it leaves the purchase to be confirmed by its POST under the key).
 * An order that shows another eSIM or plan was placed under our key for another request.
 */
function ownership(req: EsimOrderRequest, order: EsimOrder): Recalled<EsimOrder> {
  const ours = req.kind === 'recharge' ? { esimNo: req.esimNo } : { planNo: req.planNo };
  const [field, value] = Object.entries(ours)[0];
  if (contradicts(order, ours)) throw idempotencyConflict(req.idempotencyKey, field);
  return { outcome: order, ours: order[field] === value };
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
