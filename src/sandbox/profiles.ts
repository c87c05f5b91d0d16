/**
 * The sandbox's `minimal` profile (CONTRACTS §8): the provider as its spec promises and no
 * more. Answers keep only the fields the spec lists for each endpoint, failures carry plain
 * wording instead of code words, payouts use the other spelling (SUCCESS, CANCELED), and
 * webhooks come without X-API-Key, eventId and createdAt. The `contract` profile (default)
 * answers exactly as CONTRACTS says; its shapes are unchanged by this module.
 *
 * The `divergent` profile is `minimal`, and where the spec shows no shape it answers in another
 * way than ours: card actions `data: null`, a recharge only `orderNo` and `status`, an order
 * lookup without its `orderNo`, a KYC status query with `status` instead of `kycStatus`,
 * operations with `status` only, field errors as an array of `{ field, message }`, other plain
 * wordings (a stale BIN "BIN not found", a balance too low "… exceeds available balance"),
 * CARD_CREATED without `status`, and other words for the payout statuses the spec does not list.
 */
import type { EndpointKey } from '../provider-api';
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
/** divergent: also other words for the payout statuses the spec does not show at all. */
const DIVERGENT_PAYOUT_SPELLING: Record<string, string> = { ...PAYOUT_SPELLING, PENDING: 'SUBMITTED', PROCESSING: 'IN_TRANSIT' };

/** divergent: the `data` of answers whose shape the spec does not show, answered another way than ours. */
const DIVERGENT_DATA: Partial<Record<EndpointKey, (data: Record<string, unknown>) => unknown>> = {
  freezeCard: () => null,
  unfreezeCard: () => null,
  updateCardPin: () => null,
  updateCardContact: () => null,
  deleteCard: () => null,
  rechargeEsim: ({ orderNo, status }) => ({ orderNo, status }),
  getEsimOrder: ({ orderNo: _orderNo, ...order }) => order,
  getKycCardholder: ({ kycStatus, ...holder }) => ({ ...holder, status: kycStatus }),
};

/** divergent: plain wordings other than minimal's, still plain English a provider might send. */
const DIVERGENT_WORDS: Partial<Record<string, string>> = {
  INSUFFICIENT_FUNDS: 'Amount exceeds available balance',
  NOT_FOUND: 'The requested resource does not exist',
};

function pick(data: unknown, fields: readonly string[] | undefined): unknown {
  if (fields === undefined || data === null || typeof data !== 'object') return data;
  if (Array.isArray(data)) return data.map((item) => pick(item, fields));
  const source = data as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => source[f] !== undefined).map((f) => [f, source[f]]));
}

function spellingOf(profile: SandboxProfile): Record<string, string> {
  return profile === 'divergent' ? DIVERGENT_PAYOUT_SPELLING : PAYOUT_SPELLING;
}

function respellPayout<T>(payout: T, profile: SandboxProfile): T {
  const p = payout as { status?: unknown };
  const spelling = spellingOf(profile);
  return typeof p.status === 'string' && spelling[p.status] ? ({ ...payout, status: spelling[p.status] } as T) : payout;
}

/** An answer body (success or failure envelope) as the profile words it. */
export function presentAnswer(profile: SandboxProfile, endpoint: EndpointKey | undefined, body: unknown): unknown {
  if (profile === 'contract' || body === null || typeof body !== 'object') return body;
  const envelope = body as { code?: number; message?: string; data?: unknown; errors?: Record<string, string> };
  if (envelope.code === 0) {
    let data = pick(envelope.data, endpoint && SPEC_FIELDS[endpoint]);
    if (endpoint === 'getPayout' || endpoint === 'createPayout') data = respellPayout(data, profile);
    const divergent = profile === 'divergent' && endpoint ? DIVERGENT_DATA[endpoint] : undefined;
    return { ...envelope, data: divergent ? divergent((data ?? {}) as Record<string, unknown>) : data };
  }
  const message = plainMessage(envelope.message ?? '', envelope.code, profile, envelope.errors);
  if (profile !== 'divergent' || envelope.errors === undefined) return { ...envelope, message };
  return { ...envelope, message, errors: Object.entries(envelope.errors).map(([field, text]) => ({ field, message: text })) };
}

function plainMessage(message: string, status: number | undefined, profile: SandboxProfile, errors?: Record<string, string>): string {
  const code = message.split(':')[0];
  const divergent = profile === 'divergent' ? (errors?.cardBinId !== undefined ? 'BIN not found' : DIVERGENT_WORDS[code]) : undefined;
  const plain = divergent ?? codeMeaning(code)?.plain ?? message;
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
  const spelling = spellingOf(profile);
  const eventType = isPayout && spelling[status] ? `PAYOUT_${spelling[status]}` : event.eventType;
  const fields = isPayout ? PAYOUT : EVENT_FIELDS[event.eventType];
  let data = pick(event.data, fields);
  if (isPayout) data = respellPayout(data, profile);
  // The spec: when CARD_CREATED arrives the card "is then ENABLE"; divergent leaves the status out.
  if (profile === 'divergent' && event.eventType === 'CARD_CREATED') data = withoutStatus(data);
  return { body: { eventType, data }, withApiKey: false };
}

function withoutStatus(data: unknown): unknown {
  if (data === null || typeof data !== 'object') return data;
  const { status: _status, ...rest } = data as Record<string, unknown>;
  return rest;
}

/** Control API input: any profile's spelling of a payout status, as our word. */
export function ourPayoutStatus(status: string): string {
  return Object.entries(DIVERGENT_PAYOUT_SPELLING).find(([, other]) => other === status)?.[0] ?? status;
}
