/**
 * eSIM orders: PAID (wallet charged synchronously) → ISSUING → ISSUED, or → FAILED →
 * REFUNDED with the wallet refunded in full. Purchases and recharges each create an order;
 * one eSIM accumulates many. Usage figures change at most once per esimUsageSyncMs.
 */
import type { EsimOrder, EsimPlan, EsimUsage } from '../../provider-api';
import { ApiError, notFound } from '../errors';
import { ESIM_PLANS, type PlanFixture } from '../fixtures';
import { generateIccid, newId } from '../ids';
import { EXTERNAL, InsufficientBalance, WALLET } from '../ledger';
import type { Sandbox } from '../sandbox';
import type { EsimOrderRecord, EsimRecord } from '../state';

const DAY_MS = 86_400_000;

export function planView(p: PlanFixture): EsimPlan {
  return {
    planNo: p.planNo, name: p.name, coverage: [...p.coverage], dataMb: p.dataMb, validityDays: p.validityDays,
    priceUsd: p.priceCents / 100, priceCents: p.priceCents, available: p.available,
  };
}

function availablePlan(planNo: string): PlanFixture {
  const plan = ESIM_PLANS.find((p) => p.planNo === planNo);
  if (!plan) throw new ApiError('PLAN_UNAVAILABLE', 'no such plan in the catalog');
  if (!plan.available) throw new ApiError('PLAN_UNAVAILABLE', 'plan is not available');
  return plan;
}

/**
 * The answer of POST /esim/purchase and /esim/recharge: the spec allows only ISSUED or PAID
 * there, so an order still issuing (or already failing) reads PAID; GET /esim/orders says more.
 */
export function placedOrderView(sb: Sandbox, o: EsimOrderRecord): EsimOrder {
  const view = orderView(sb, o);
  return view.status === 'ISSUED' ? view : { ...view, status: 'PAID' };
}

export function orderView(sb: Sandbox, o: EsimOrderRecord): EsimOrder {
  const esim = sb.state.esims.get(o.esimNo);
  const issued = o.status === 'ISSUED' && esim?.issued === true;
  const view: EsimOrder = {
    orderNo: o.orderNo, type: o.type, status: o.status, planNo: o.planNo, amount: o.amount,
    iccid: issued ? esim!.iccid! : null,
    qrCode: issued ? esim!.qrCode! : null,
    esimNo: esim?.issued ? o.esimNo : null,
    createdAt: o.createdAt, updatedAt: o.updatedAt,
  };
  if (o.operationId) view.operationId = o.operationId;
  if (o.failureReason) view.failureReason = o.failureReason;
  return view;
}

export function getOrder(sb: Sandbox, orderNo: string): EsimOrderRecord {
  const o = sb.state.esimOrders.get(orderNo);
  if (!o) throw notFound('order');
  return o;
}

function charge(sb: Sandbox, plan: PlanFixture, orderNo: string, key?: string): void {
  try {
    sb.ledger.transfer({ kind: 'ESIM_CHARGE', from: WALLET, to: EXTERNAL, amount: plan.priceCents, ref: orderNo, idempotencyKey: key });
  } catch (err) {
    if (err instanceof InsufficientBalance) throw new ApiError('INSUFFICIENT_FUNDS', `wallet balance is below the plan price, short by ${err.shortBy} cents`);
    throw err;
  }
}

/** Charges and creates a PAID order; issuance runs on its own. */
export function purchase(sb: Sandbox, planNo: string, key?: string, operationId?: string): EsimOrderRecord {
  const plan = availablePlan(planNo);
  const orderNo = newId('eord');
  charge(sb, plan, orderNo, key);
  const now = sb.now();
  const esim: EsimRecord = {
    esimNo: newId('esim'), planNo, issued: false, status: 'ACTIVE', dataTotalMb: plan.dataMb, dataUsedMb: 0,
    expiresAt: 0, syncedAt: now, currentOrderNo: orderNo, alertedAt80: false, expiringNotified: false,
  };
  sb.state.esims.set(esim.esimNo, esim);
  return startOrder(sb, { orderNo, type: 'PURCHASE', status: 'PAID', planNo, amount: plan.priceCents, esimNo: esim.esimNo, idempotencyKey: key, operationId, createdAt: now, updatedAt: now }, plan);
}

/** Renews the eSIM's current plan; no plan switching. */
export function recharge(sb: Sandbox, esimNo: string, key?: string, operationId?: string): EsimOrderRecord {
  const esim = sb.state.esims.get(esimNo);
  if (!esim || !esim.issued) throw notFound('eSIM');
  const plan = availablePlan(esim.planNo);
  const orderNo = newId('eord');
  charge(sb, plan, orderNo, key);
  const now = sb.now();
  return startOrder(sb, { orderNo, type: 'RECHARGE', status: 'PAID', planNo: plan.planNo, amount: plan.priceCents, esimNo, idempotencyKey: key, operationId, createdAt: now, updatedAt: now }, plan);
}

function startOrder(sb: Sandbox, order: EsimOrderRecord, plan: PlanFixture): EsimOrderRecord {
  sb.state.esimOrders.set(order.orderNo, order);
  order.timer = sb.timers.after(0, () => {
    setStatus(sb, order, 'ISSUING');
    const ms = plan.behaviour === 'slow' ? sb.config.esimSlowIssueMs : sb.config.esimIssueMs;
    order.timer = sb.timers.after(ms, () => finishOrder(sb, order.orderNo, plan.behaviour === 'fail' ? 'FAILED' : 'ISSUED'));
  });
  return order;
}

/** Finishes a PAID or ISSUING order; FAILED is followed at once by the full refund. */
export function finishOrder(sb: Sandbox, orderNo: string, outcome: 'ISSUED' | 'FAILED'): boolean {
  const order = sb.state.esimOrders.get(orderNo);
  if (!order || (order.status !== 'PAID' && order.status !== 'ISSUING')) return false;
  sb.timers.cancel(order.timer);
  const esim = sb.state.esims.get(order.esimNo)!;
  if (outcome === 'FAILED') {
    setStatus(sb, order, 'FAILED');
    order.failureReason = 'ISSUANCE_FAILED';
    sb.ledger.transfer({ kind: 'ESIM_REFUND', from: EXTERNAL, to: WALLET, amount: order.amount, ref: order.orderNo });
    setStatus(sb, order, 'REFUNDED');
    if (order.idempotencyKey) sb.idempotency.settle(order.idempotencyKey, 'FAILED', 'ISSUANCE_FAILED');
    if (order.type === 'PURCHASE') {
      sb.webhooks.emit('ESIM_REFUNDED', { orderNo, esimNo: order.esimNo, status: 'REFUNDED', refundAmount: order.amount });
    } else {
      sb.webhooks.emit('ESIM_RECHARGED', { orderNo, esimNo: esim.esimNo, status: 'REFUNDED' });
    }
    return true;
  }
  const plan = ESIM_PLANS.find((p) => p.planNo === order.planNo)!;
  const now = sb.now();
  if (order.type === 'PURCHASE') {
    esim.issued = true;
    esim.iccid = generateIccid();
    esim.qrCode = `LPA:1$smdp.sandbox.invalid$${esim.iccid}`;
    esim.expiresAt = now + plan.validityDays * DAY_MS;
  } else {
    esim.dataTotalMb = plan.dataMb;
    esim.dataUsedMb = 0;
    esim.expiresAt = Math.max(esim.expiresAt, now) + plan.validityDays * DAY_MS;
    esim.alertedAt80 = esim.expiringNotified = false;
  }
  esim.status = 'ACTIVE';
  esim.currentOrderNo = orderNo;
  esim.syncedAt = now;
  setStatus(sb, order, 'ISSUED');
  if (order.idempotencyKey) sb.idempotency.settle(order.idempotencyKey, 'COMPLETED');
  if (order.type === 'PURCHASE') {
    sb.webhooks.emit('ESIM_ISSUED', { orderNo, esimNo: esim.esimNo, iccid: esim.iccid!, qrCode: esim.qrCode!, status: 'ISSUED' });
  } else {
    sb.webhooks.emit('ESIM_RECHARGED', { orderNo, esimNo: esim.esimNo, status: 'ISSUED' });
  }
  return true;
}

/** The purchase "waits a few seconds for issuance": until the order settles or esimWaitMs passes. */
export async function waitForIssuance(sb: Sandbox, order: EsimOrderRecord): Promise<void> {
  const deadline = sb.now() + sb.config.esimWaitMs;
  while ((order.status === 'PAID' || order.status === 'ISSUING') && sb.now() < deadline) {
    await sb.timers.sleep(Math.min(20, deadline - sb.now()));
  }
}

/** Usage, synced at most once per esimUsageSyncMs; each sync simulates some consumption. */
export function usage(sb: Sandbox, esimNo: string): EsimUsage {
  const esim = sb.state.esims.get(esimNo);
  if (!esim || !esim.issued) throw notFound('eSIM');
  const now = sb.now();
  if (now - esim.syncedAt >= sb.config.esimUsageSyncMs && esim.status === 'ACTIVE') {
    esim.syncedAt = now;
    setUsage(sb, esim, esim.dataUsedMb + Math.max(1, Math.round(esim.dataTotalMb * 0.05)));
  }
  return usageView(esim);
}

export function usageView(esim: EsimRecord): EsimUsage {
  return {
    esimNo: esim.esimNo, iccid: esim.iccid!, planNo: esim.planNo, status: esim.status, dataTotalMb: esim.dataTotalMb,
    dataUsedMb: esim.dataUsedMb, dataRemainingMb: Math.max(0, esim.dataTotalMb - esim.dataUsedMb), expiresAt: esim.expiresAt, syncedAt: esim.syncedAt,
  };
}

/** Sets consumption and emits the threshold events it crosses (80 %, depletion, expiry). */
export function setUsage(sb: Sandbox, esim: EsimRecord, usedMb: number): void {
  const now = sb.now();
  esim.dataUsedMb = Math.min(esim.dataTotalMb, Math.max(0, Math.round(usedMb)));
  const base = { orderNo: esim.currentOrderNo, esimNo: esim.esimNo };
  if (!esim.alertedAt80 && esim.dataUsedMb >= esim.dataTotalMb * 0.8) {
    esim.alertedAt80 = true;
    sb.webhooks.emit('ESIM_USAGE_ALERT', { ...base, thresholdPercent: 80, dataUsedMb: esim.dataUsedMb, dataTotalMb: esim.dataTotalMb });
  }
  if (!esim.expiringNotified && esim.expiresAt - now <= DAY_MS && esim.expiresAt > now) {
    esim.expiringNotified = true;
    sb.webhooks.emit('ESIM_EXPIRING', { ...base, expiresAt: esim.expiresAt });
  }
  const ended = esim.dataUsedMb >= esim.dataTotalMb ? 'DEPLETED' : esim.expiresAt <= now ? 'EXPIRED' : undefined;
  if (ended && esim.status === 'ACTIVE') {
    esim.status = ended;
    sb.webhooks.emit('ESIM_EXPIRED', { ...base, reason: ended, dataUsedMb: esim.dataUsedMb, dataTotalMb: esim.dataTotalMb });
  }
}

function setStatus(sb: Sandbox, order: EsimOrderRecord, status: EsimOrderRecord['status']): void {
  order.status = status;
  order.updatedAt = sb.now();
}
