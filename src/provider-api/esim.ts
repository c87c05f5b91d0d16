/** eSIMs: plans, purchase and recharge requests, orders and usage. */
import { Body, optional, pattern, required, withExtra } from './rules';

export const ESIM_ORDER_STATUSES = ['PAID', 'ISSUING', 'ISSUED', 'FAILED', 'REFUNDED'] as const;
export type EsimOrderStatus = (typeof ESIM_ORDER_STATUSES)[number];
export const ESIM_ORDER_TYPES = ['PURCHASE', 'RECHARGE'] as const;

const planNo = pattern(/^epln_./, 'must be an epln_ plan id');
const esimNo = pattern(/^esim_./, 'must be an esim_ id');

export interface PurchaseEsimRequest {
  planNo: string;
}
export const purchaseEsimRequest = new Body<PurchaseEsimRequest>({ planNo: required(planNo) });

/** Renews the eSIM's current plan; planNo, when sent, must be that plan (no switching). */
export interface RechargeEsimRequest {
  esimNo: string;
  planNo?: string;
  /** Shape not shown: fields we do not model, sent as they are. */
  extra?: Record<string, unknown>;
}
/** The names a recharge's `extra` may carry: those our callers use (docs/provider-fidelity.md). */
export const RECHARGE_EXTRA_FIELDS = ['autoRenew'] as const;
export const rechargeEsimRequest = new Body<RechargeEsimRequest>(withExtra({ esimNo: required(esimNo), planNo: optional(planNo) }, RECHARGE_EXTRA_FIELDS));

export interface EsimPlan {
  planNo: string;
  name: string;
  /** ISO 3166-1 alpha-2 codes the plan covers. */
  coverage: string[];
  dataMb: number;
  validityDays: number;
  /** Project-specific catalog price in US dollars (e.g. 4.5); priceCents is the same, exact. */
  priceUsd: number;
  priceCents: number;
  available: boolean;
}

export interface EsimOrder {
  orderNo: string;
  type: (typeof ESIM_ORDER_TYPES)[number];
  /** The purchase answer says ISSUED or PAID (ISSUING while issuance runs; REFUNDED if it already failed). */
  status: EsimOrderStatus;
  planNo: string;
  /** Charged to the wallet, cents. */
  amount: number;
  iccid: string | null;
  qrCode: string | null;
  esimNo: string | null;
  /** Present only when X-Idempotency-Key was supplied. */
  operationId?: string;
  failureReason?: string;
  createdAt: number;
  updatedAt: number;
}

export interface EsimUsage {
  esimNo: string;
  iccid: string;
  planNo: string;
  status: 'ACTIVE' | 'DEPLETED' | 'EXPIRED';
  dataTotalMb: number;
  dataUsedMb: number;
  dataRemainingMb: number;
  expiresAt: number;
  /** When the figures were last synced; at most once a minute. */
  syncedAt: number;
}
