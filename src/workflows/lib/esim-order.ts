/**
 * An eSIM order, purchase or recharge, under a durable idempotency key: the key is fixed
 * before the first call (the caller's, or derived from the workflow ID) and travels in the
 * activity's input, so every retry and every repeated start with the same workflow ID reuses
 * it and the wallet is charged once. The provider answers ISSUED, or PAID when issuance takes
 * longer; then the order's ESIM_ISSUED / ESIM_RECHARGED / ESIM_REFUNDED webhook (through the
 * order's entity workflow, which polls GET /esim/orders/{orderNo} when it is late) says how it ended.
 */
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { purchaseEsimRequest, rechargeEsimRequest } from '../../provider-api/esim';
import type { EsimOrderAnswer as EsimOrder } from '../../provider/answers';
import type { EsimOrderRequest } from '../../activities/esim';
import { describeErrors, hasErrors, keyErrors } from '../../shared/card-rules';
import { FailureType, type FieldErrors } from '../../shared/failures';
import { idempotencyKeyFor } from './keys';
import { FLOW_KIND, PROVIDER_STATUS } from '../../shared/search-attributes';
import { isFinal, phaseOf, statusRank } from '../../shared/statuses';
import type { PurchaseEsimInput, RechargeEsimInput } from '../../shared/types';
import { awaitOutcome, type Outcome } from './await-outcome';
import { MONEY_DEADLINE_MS } from './money-movement';
import { failWith, providerCalls, readAfterEffect } from './provider';

export type EsimOrderInput = ({ kind: 'purchase' } & PurchaseEsimInput) | ({ kind: 'recharge' } & RechargeEsimInput);

/** A charge is not given up on for a count of attempts: only its deadline ends it. */
const chargeRetry = { maximumAttempts: Number.POSITIVE_INFINITY, maximumInterval: '20 seconds' } as const;

const FLOW_NAME = { purchase: 'purchaseEsim', recharge: 'rechargeEsim' } as const;
const KEY_PURPOSE = { purchase: 'esim', recharge: 'esimrc' } as const;

/** The body of purchaseEsim and rechargeEsim: the order once ISSUED; a refund fails EsimRefunded. */
export async function esimOrderFlow(input: EsimOrderInput): Promise<EsimOrder> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: FLOW_NAME[input.kind] }]);
  assertValid(input);
  const { workflowId } = workflowInfo();
  const idempotencyKey = input.idempotencyKey ?? idempotencyKeyFor(KEY_PURPOSE[input.kind], workflowId);
  // A key derived from the workflow ID: a restart of that ID looks for an earlier run's key first (activities/earlier-key.ts).
  const keyOrigin = input.idempotencyKey === undefined ? { keyOrigin: { purpose: KEY_PURPOSE[input.kind], workflowId } } : {};
  const request: EsimOrderRequest =
    input.kind === 'purchase'
      ? { kind: 'purchase', planNo: input.planNo, idempotencyKey, ...keyOrigin }
      : { kind: 'recharge', esimNo: input.esimNo, idempotencyKey, ...keyOrigin, ...(input.extra === undefined ? {} : { extra: input.extra }) };

  // Attempts bounded by time: past MONEY_DEADLINE_MS the charge ends OutcomeUnknown with its key (lib/provider.ts).
  const placed = await providerCalls('general', { retry: chargeRetry, idempotencyKey, scheduleToCloseTimeout: MONEY_DEADLINE_MS }).placeEsimOrder(request);
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: placed.status }]);
  const order = isFinal('esimOrder', placed.status) ? placed : await awaitFinalOrder(placed.orderNo, input);
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: order.status }]);
  if (phaseOf('esimOrder', order.status) === 'failed') {
    failWith(FailureType.EsimRefunded, `eSIM order ${order.orderNo} could not be completed and was refunded in full`, [
      { orderNo: order.orderNo, esimNo: order.esimNo, refundAmount: order.amount, failureReason: order.failureReason, idempotencyKey },
    ]);
  }
  return order;
}

/** Waits for ISSUED or REFUNDED; the result is always the provider's whole order (a webhook carries only part of it). */
async function awaitFinalOrder(orderNo: string, input: EsimOrderInput): Promise<EsimOrder> {
  const outcome = await awaitOutcome({ kind: 'esimOrder', entityId: orderNo, timings: input.timings });
  if (!outcome) {
    // Charged, neither issued nor refunded: the flow's open item follows the order from here (docs/idempotency.md, "Open items").
    failWith(FailureType.EsimIssuanceTimedOut, `eSIM order ${orderNo} was still not issued or refunded when the deadline passed`, [{ orderNo, mayHaveTakenEffect: true }]);
  }
  if (outcome.source === 'poll') return outcome.data as unknown as EsimOrder;
  // The charge took effect: a read that fails for good (404 read lag, 403) is an unknown outcome, never the read's own failure.
  const read = await readAfterEffect(() => providerCalls('general').getEsimOrder({ orderNo }), `eSIM order ${orderNo}`, { orderNo, lastStatus: outcome.status });
  return webhookStatusStands(read, outcome);
}

/** The order fields an eSIM webhook carries that the read may still lack (ESIM_ISSUED: the eSIM's iccid and QR code). */
const WEBHOOK_ORDER_FIELDS = ['esimNo', 'iccid', 'qrCode', 'failureReason'] as const;

/**
 * The final status a webhook brought is the provider's word (issue 51): a read of the order that
 * shows an earlier, non-final status (a read replica or cache behind the webhook) adds the order's
 * other fields but never takes the status back, else a refunded order would end as a success and an
 * issued one as PAID. A read as far along (a final status of its own) is the whole order as it is.
 */
function webhookStatusStands(read: EsimOrder, outcome: Outcome): EsimOrder {
  if (statusRank('esimOrder', read.status) >= statusRank('esimOrder', outcome.status)) return read;
  const carried = Object.fromEntries(WEBHOOK_ORDER_FIELDS.filter((f) => typeof outcome.data[f] === 'string').map((f) => [f, outcome.data[f]]));
  return { ...read, ...carried, status: outcome.status };
}

function assertValid(input: EsimOrderInput): void {
  const errors = esimOrderErrors(input ?? ({} as EsimOrderInput));
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid eSIM ${input.kind}: ${describeErrors(errors)}`, [{ errors }]);
}

function esimOrderErrors(input: EsimOrderInput): FieldErrors {
  const errors: FieldErrors =
    input.kind === 'purchase' ? purchaseEsimRequest.errors({ planNo: input.planNo }) : rechargeEsimRequest.errors({ esimNo: input.esimNo, extra: input.extra });
  return input.idempotencyKey === undefined ? errors : { ...errors, ...keyErrors(input.idempotencyKey) };
}
