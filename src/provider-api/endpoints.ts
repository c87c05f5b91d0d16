/**
 * The provider's endpoints as the spec lists them: method, path, rate-limit tier, idempotency
 * header policy. Plain data, importable anywhere (workflow code included).
 */
import { pattern, type Rule } from './rules';

export const API_BASE_PATH = '/open-api/v1';

/** The spec's "endpoint type" in its table of limits per window: general 100, sensitive 70, balance moves 70. */
export type RateLimitTier = 'general' | 'sensitive' | 'balance';
export type IdempotencyPolicy = 'none' | 'optional' | 'required';

export interface EndpointDef {
  key: string;
  method: 'GET' | 'POST' | 'DELETE';
  /** Relative to API_BASE_PATH, path parameters as `:name`. */
  path: string;
  rateLimitTier: RateLimitTier;
  idempotency: IdempotencyPolicy;
}

function ep(key: string, method: EndpointDef['method'], path: string, tier: RateLimitTier = 'general', idempotency: IdempotencyPolicy = 'none'): EndpointDef {
  return { key, method, path, rateLimitTier: tier, idempotency };
}

/** Every endpoint; each key has its own rate-limit counter (path parameters normalised). */
export const ENDPOINTS = {
  listCardBins: ep('listCardBins', 'GET', '/card-bins'),
  createCard: ep('createCard', 'POST', '/cards', 'general', 'optional'),
  getCard: ep('getCard', 'GET', '/cards/:cardId'),
  getCardSensitive: ep('getCardSensitive', 'GET', '/cards/:cardId/sensitive', 'sensitive'),
  fundCard: ep('fundCard', 'POST', '/cards/:cardId/funding', 'balance', 'optional'),
  withdrawFromCard: ep('withdrawFromCard', 'POST', '/cards/:cardId/withdrawal', 'balance', 'optional'),
  freezeCard: ep('freezeCard', 'POST', '/cards/:cardId/freeze'),
  unfreezeCard: ep('unfreezeCard', 'POST', '/cards/:cardId/unfreeze'),
  updateCardPin: ep('updateCardPin', 'POST', '/cards/:cardId/pin'),
  updateCardContact: ep('updateCardContact', 'POST', '/cards/:cardId/contact'),
  deleteCard: ep('deleteCard', 'DELETE', '/cards/:cardId'),
  getWalletBalance: ep('getWalletBalance', 'GET', '/wallet/balance'),
  getOperation: ep('getOperation', 'GET', '/operations/:idempotencyKey'),
  createPresignedUpload: ep('createPresignedUpload', 'POST', '/kyc/presignedUploads'),
  submitKycForm: ep('submitKycForm', 'POST', '/kyc/cardholders/form'),
  submitKycManual: ep('submitKycManual', 'POST', '/kyc/cardholders/manual'),
  startHostedKyc: ep('startHostedKyc', 'POST', '/kyc/cardholders/auto'),
  getKycCardholder: ep('getKycCardholder', 'GET', '/kyc/cardholders/:id'),
  createPayout: ep('createPayout', 'POST', '/payouts', 'general', 'required'),
  getPayout: ep('getPayout', 'GET', '/payouts/:merOrderNo'),
  listEsimPlans: ep('listEsimPlans', 'GET', '/esim/plans'),
  purchaseEsim: ep('purchaseEsim', 'POST', '/esim/purchase', 'general', 'optional'),
  rechargeEsim: ep('rechargeEsim', 'POST', '/esim/recharge', 'general', 'optional'),
  getEsimOrder: ep('getEsimOrder', 'GET', '/esim/orders/:orderNo'),
  getEsimUsage: ep('getEsimUsage', 'GET', '/esim/esims/:esimNo/usage'),
} as const satisfies Record<string, EndpointDef>;
export type EndpointKey = keyof typeof ENDPOINTS;

/** Fills a path template: endpointPath(ENDPOINTS.getCard, { cardId }) → /cards/crd_1 (parameters URI-encoded). */
export function endpointPath(endpoint: EndpointDef, params: Record<string, string> = {}): string {
  return endpoint.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

export const IDEMPOTENCY_HEADER = 'X-Idempotency-Key';

/** The spec: 1-64 characters of [a-zA-Z0-9_-], unique per project and endpoint. */
export const IDEMPOTENCY_KEY_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
export const IDEMPOTENCY_KEY_RULE = 'must be 1-64 characters of [a-zA-Z0-9_-]';
export const idempotencyKey: Rule = pattern(IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE);
