/** The sandbox's records, one instance per sandbox (reset replaces it). Money lives in the Ledger. */
import type {
  Card, CardBin, CardStatus, EsimOrderStatus, KycMode, KycStatus, Payout, UploadContentType, UploadType,
} from '../provider-api';

/** What the card shares with the provider's answer (provider-api Card), held as it answers it. */
type CardContact = Pick<Card, 'cardholderId' | 'mobilePrefix' | 'mobile' | 'email' | 'billingAddress' | 'tags' | 'totalConsumption'>;

export interface CardRecord extends CardContact {
  cardId: string;
  bin: CardBin;
  firstName: string;
  lastName: string;
  status: CardStatus;
  pan: string;
  cvv: string;
  expiryMonth: number;
  expiryYear: number;
  pin?: string;
  /** Magic firstName FAIL: provisioning ends FAILED. */
  failProvisioning: boolean;
  timer?: number;
  createdAt: number;
  updatedAt: number;
  /**
   * The card as GET /cards/{cardId} answers it, recorded after each change, oldest first: what a
   * lagging read replica answers (config cardReadLagMs, domain/cards.ts readCard). Bounded: the last
   * CARD_HISTORY_MAX changes, and none older than the longest lag needs.
   */
  history: CardSnapshot[];
}

/** One recorded state of a card: its view at `at` (the sandbox's clock). */
export interface CardSnapshot {
  at: number;
  view: Readonly<Card>;
}

export interface CardholderRecord {
  id: string;
  mode: KycMode;
  kycStatus: KycStatus;
  firstName: string;
  lastName: string;
  idType?: 'PASSPORT' | 'ID_CARD' | 'DRIVER_LICENSE';
  idNumber?: string;
  nationality?: string;
  reason?: string;
  /** Magic idNumber REJECT…: review ends REJECTED. */
  rejectAtReview: boolean;
  timer?: number;
  createdAt: number;
  updatedAt: number;
  reviewedAt?: number;
}

export interface UploadRecord {
  uploadId: string;
  fileToken: string;
  type: UploadType;
  contentType: UploadContentType;
  fileName: string;
  expiresAt: number;
  /** AWAITING_UPLOAD until the PUT succeeds; CONSUMED once a submission used the token. */
  state: 'AWAITING_UPLOAD' | 'UPLOADED' | 'CONSUMED';
  size?: number;
}

export interface EsimRecord {
  esimNo: string;
  planNo: string;
  /** False until the purchase order is ISSUED; the esimNo is reserved meanwhile. */
  issued: boolean;
  iccid?: string;
  qrCode?: string;
  status: 'ACTIVE' | 'DEPLETED' | 'EXPIRED';
  dataTotalMb: number;
  dataUsedMb: number;
  expiresAt: number;
  syncedAt: number;
  /** The order whose plan period is current (webhooks carry it). */
  currentOrderNo: string;
  alertedAt80: boolean;
  expiringNotified: boolean;
}

export interface EsimOrderRecord {
  orderNo: string;
  type: 'PURCHASE' | 'RECHARGE';
  status: EsimOrderStatus;
  planNo: string;
  amount: number;
  esimNo: string;
  idempotencyKey?: string;
  operationId?: string;
  failureReason?: string;
  timer?: number;
  createdAt: number;
  updatedAt: number;
}

export interface PayoutRecord extends Payout {
  idempotencyKey: string;
  timer?: number;
}

export class SandboxState {
  readonly cards = new Map<string, CardRecord>();
  readonly cardholders = new Map<string, CardholderRecord>();
  readonly uploadsById = new Map<string, UploadRecord>();
  readonly uploadsByToken = new Map<string, UploadRecord>();
  readonly esims = new Map<string, EsimRecord>();
  readonly esimOrders = new Map<string, EsimOrderRecord>();
  readonly payouts = new Map<string, PayoutRecord>();
  /** BINs the provider added or withdrew since the fixtures (control API, to seed reconciliation differences). */
  readonly addedBins: CardBin[] = [];
  readonly removedBinIds = new Set<string>();
}

