/** The provider's webhook events (CONTRACTS §4): the envelope and each event type's data. */
import type { Card } from './cards';
import type { Payout } from './payouts';

export interface WebhookEventDataByType {
  CARD_CREATED: Card;
  CARDHOLDER_KYC_STATUS: { id: string; kycStatus: 'APPROVED' | 'REJECTED'; reason?: string };
  ESIM_ISSUED: { orderNo: string; esimNo: string; iccid: string; qrCode: string; status: 'ISSUED' };
  /** esimNo was reserved at purchase; the eSIM itself was never issued. */
  ESIM_REFUNDED: { orderNo: string; esimNo: string | null; status: 'REFUNDED'; refundAmount: number };
  ESIM_RECHARGED: { orderNo: string; esimNo: string; status: 'ISSUED' | 'REFUNDED' };
  ESIM_USAGE_ALERT: { orderNo: string; esimNo: string; thresholdPercent: number; dataUsedMb: number; dataTotalMb: number };
  ESIM_EXPIRING: { orderNo: string; esimNo: string; expiresAt: number };
  ESIM_EXPIRED: { orderNo: string; esimNo: string; reason: 'DEPLETED' | 'EXPIRED'; dataUsedMb: number; dataTotalMb: number };
  PAYOUT_PROCESSING: Payout;
  PAYOUT_COMPLETED: Payout;
  PAYOUT_FAILED: Payout;
  PAYOUT_CANCELLED: Payout;
  CARD_TRANSACTION: {
    transactionId: string;
    cardId: string;
    amount: number;
    currency: string;
    merchantName: string;
    status: 'APPROVED' | 'DECLINED';
    declineReason?: string;
    createdAt: number;
  };
}

export type WebhookEventType = keyof WebhookEventDataByType;
export type WebhookEventData<T extends WebhookEventType> = WebhookEventDataByType[T];
export type WebhookEvent = { [T in WebhookEventType]: { eventId: string; createdAt: number; eventType: T; data: WebhookEventData<T> } }[WebhookEventType];
