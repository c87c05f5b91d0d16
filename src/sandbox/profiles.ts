/**
 * The sandbox's `minimal` profile (CONTRACTS §8): the provider as its spec promises and no
 * more. Answers keep only the fields the spec lists for each endpoint, failures carry plain
 * wording instead of code words, payouts use the other spelling (SUCCESS, CANCELED), and
 * webhooks come without X-API-Key, eventId and createdAt. The `contract` profile (default)
 * answers exactly as CONTRACTS says; its shapes are unchanged by this module.
 */
import type { EndpointKey } from '../provider/api';
import { codeMeaning } from '../shared/failures';
import type { SandboxProfile } from './config';

const CARD_BIN = ['cardBinId', 'bin', 'brand', 'issuingCountry', 'currency', 'mobile', 'email', 'supportPin', 'requireKycCardholder'];
/** The POST /cards answer, as the spec lists it. */
const CARD_CREATED = [
  'cardId', 'name', 'cardNumber', 'status', 'availableBalance', 'totalConsumption', 'cardBinId', 'supportPin', 'brand', 'cardholderName', 'billingAddress', 'createdAt', 'updatedAt',
];
/** GET /cards/{cardId} adds the contact and cardholder fields. */
const CARD = [...CARD_CREATED, 'cardholderId', 'mobilePrefix', 'mobile', 'email'];
const PAYOUT = [
  'merOrderNo', 'status', 'paymentType', 'arriveCurrency', 'arriveAmount', 'quoteRate', 'settleAmount', 'payeeFirstName', 'payeeLastName', 'payeeAccountNo', 'remark', 'createdAt', 'completedAt', 'canCancel',
];
const ESIM_ORDER = ['orderNo', 'status', 'iccid', 'qrCode', 'esimNo', 'operationId'];
const KYC_CREATED = ['id', 'kycStatus', 'mode'];

/**
 * Per endpoint, the `data` fields the spec lists. Endpoints whose shapes are "not shown" and
 * that our flows read as a whole (wallet, sensitive data, plans, usage, the hosted KYC flow)
 * keep the sandbox's own shape: there is nothing narrower to answer.
 */
const SPEC_FIELDS: Partial<Record<EndpointKey, readonly string[]>> = {
  listCardBins: CARD_BIN,
  createCard: CARD_CREATED,
  getCard: CARD,
  freezeCard: CARD,
  unfreezeCard: CARD,
  updateCardPin: CARD,
  updateCardContact: CARD,
  deleteCard: CARD,
  fundCard: ['success', 'message', 'operationId'],
  withdrawFromCard: ['success', 'message', 'operationId'],
  getOperation: ['status'],
  createPresignedUpload: ['uploadUrl', 'fileToken', 'expiresIn'],
  submitKycForm: KYC_CREATED,
  submitKycManual: KYC_CREATED,
  getKycCardholder: ['id', 'kycStatus'],
  createPayout: PAYOUT,
  getPayout: PAYOUT,
  purchaseEsim: ESIM_ORDER,
  rechargeEsim: ESIM_ORDER,
  getEsimOrder: ESIM_ORDER,
};

/** Webhook data, per event type: the resource's spec fields, or CONTRACTS §4's "at least". */
const EVENT_FIELDS: Record<string, readonly string[]> = {
  CARD_CREATED: CARD,
  CARDHOLDER_KYC_STATUS: ['id', 'kycStatus', 'reason'],
  ESIM_ISSUED: ['orderNo', 'esimNo', 'iccid', 'qrCode', 'status'],
  ESIM_REFUNDED: ['orderNo', 'esimNo', 'status', 'refundAmount'],
  ESIM_RECHARGED: ['orderNo', 'esimNo', 'status'],
};

/** Our payout words → the other spelling that public integration code uses. */
const PAYOUT_SPELLING: Record<string, string> = { COMPLETED: 'SUCCESS', CANCELLED: 'CANCELED' };

function pick(data: unknown, fields: readonly string[] | undefined): unknown {
  if (fields === undefined || data === null || typeof data !== 'object') return data;
  if (Array.isArray(data)) return data.map((item) => pick(item, fields));
  const source = data as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => source[f] !== undefined).map((f) => [f, source[f]]));
}

function respellPayout<T>(payout: T): T {
  const p = payout as { status?: unknown };
  return typeof p.status === 'string' && PAYOUT_SPELLING[p.status] ? ({ ...payout, status: PAYOUT_SPELLING[p.status] } as T) : payout;
}

/** An answer body (success or failure envelope) as the profile words it. */
export function presentAnswer(profile: SandboxProfile, endpoint: EndpointKey | undefined, body: unknown): unknown {
  if (profile === 'contract' || body === null || typeof body !== 'object') return body;
  const envelope = body as { code?: number; message?: string; data?: unknown; errors?: unknown };
  if (envelope.code === 0) {
    const data = pick(envelope.data, endpoint && SPEC_FIELDS[endpoint]);
    return { ...envelope, data: endpoint === 'getPayout' || endpoint === 'createPayout' ? respellPayout(data) : data };
  }
  return { ...envelope, message: plainMessage(envelope.message ?? '', envelope.code) };
}

function plainMessage(message: string, status: number | undefined): string {
  const code = message.split(':')[0];
  const plain = codeMeaning(code)?.plain ?? message;
  // The spec: a 429's message states how many seconds to wait.
  if (code === 'RATE_LIMITED' && status === 429) {
    const seconds = /(\d+) seconds?$/.exec(message)?.[1];
    return seconds ? `${plain}, please wait ${seconds}s before retrying` : plain;
  }
  return plain;
}

export interface PresentedEvent {
  /** The JSON body to send. */
  body: Record<string, unknown>;
  /** Whether the X-API-Key header goes with it. */
  withApiKey: boolean;
}

/** A webhook as the profile sends it. */
export function presentEvent(profile: SandboxProfile, event: { eventId: string; eventType: string; createdAt: number; data: unknown }): PresentedEvent {
  if (profile === 'contract') return { body: { ...event }, withApiKey: true };
  const isPayout = event.eventType.startsWith('PAYOUT_');
  const status = event.eventType.slice('PAYOUT_'.length);
  const eventType = isPayout && PAYOUT_SPELLING[status] ? `PAYOUT_${PAYOUT_SPELLING[status]}` : event.eventType;
  const fields = isPayout ? PAYOUT : EVENT_FIELDS[event.eventType];
  const data = pick(event.data, fields);
  return { body: { eventType, data: isPayout ? respellPayout(data) : data }, withApiKey: false };
}

/** Control API input: either spelling of a payout status, as our word. */
export function ourPayoutStatus(status: string): string {
  return Object.entries(PAYOUT_SPELLING).find(([, other]) => other === status)?.[0] ?? status;
}
