/**
 * The provider client: one typed method per endpoint over the one signing transport
 * (stripe-node's resources over its HttpClient). Each method names its endpoint and
 * schemas and hands over to `#call`, which validates the request (the provider's own
 * rules, so a bad input fails as ValidationFailed without spending a request), sends
 * one signed attempt and reads the answer tolerantly (answers.ts: only what the spec lists
 * and the flow needs is required; a missing required field fails as InvalidResponse).
 *
 * The client never reads process.env and holds no secret: the SigningScheme does.
 */
import type { z } from 'zod';
import { invalidResponse, isProviderError, localValidationFailed, NOT_AN_ENVELOPE } from './errors';
import { CALLER_URL_RULE, callerUrlScheme, flattenExtra } from '../provider-api/rules';
import { HmacSha256Scheme } from './signing';
import { ProviderTransport, type TransportOptions } from './transport';
import type { RateBudget } from './rate-budget';
import {
  ENDPOINTS,
  IDEMPOTENCY_HEADER,
  createCardRequest,
  createPayoutRequest,
  endpointPath,
  type Body,
  fundCardRequest,
  kycAutoRequest,
  kycFormRequest,
  kycManualRequest,
  presignedUploadRequest,
  purchaseEsimRequest,
  rechargeEsimRequest,
  updateCardContactRequest,
  updateCardPinRequest,
  withdrawFromCardRequest,
  type CreateCardRequest,
  type CreatePayoutRequest,
  type EndpointDef,
  type FundCardRequest,
  type KycAutoRequest,
  type KycFormRequest,
  type KycManualRequest,
  type PresignedUploadRequest,
  type PurchaseEsimRequest,
  type RechargeEsimRequest,
  type UpdateCardContactRequest,
  type UpdateCardPinRequest,
  type WithdrawFromCardRequest,
} from '../provider-api';
import {
  balanceMoveAnswerSchema,
  cardActionAnswerSchema,
  cardAnswerSchema,
  cardBinListAnswerSchema,
  cardSensitiveAnswerSchema,
  esimOrderAnswerSchema,
  esimOrderLookupAnswerSchema,
  esimPlanListAnswerSchema,
  esimUsageAnswerSchema,
  kycCardholderAnswerSchema,
  kycSubmissionAnswerSchema,
  operationAnswerSchema,
  payoutAnswerSchema,
  presignedUploadAnswerSchema,
  walletBalanceAnswerSchema,
  type BalanceMoveAnswer as BalanceMoveResult,
  type CardAnswer as Card,
  type CardBinAnswer as CardBin,
  type CardSensitiveAnswer as CardSensitive,
  type EsimOrderAnswer as EsimOrder,
  type EsimPlanAnswer as EsimPlan,
  type EsimUsageAnswer as EsimUsage,
  type KycCardholderAnswer as KycCardholder,
  type KycSubmissionAnswer as KycSubmission,
  type OperationAnswer as Operation,
  type PayoutAnswer as Payout,
  type PresignedUploadAnswer as PresignedUpload,
  type WalletBalanceAnswer as WalletBalance,
} from './answers';

/** The client is configured exactly like its one transport. */
export type ProviderClientOptions = TransportOptions;

export interface CallOptions {
  /** Overrides the client's deadline for this call. */
  timeoutMs?: number;
}

export interface IdempotentCallOptions extends CallOptions {
  /** Sent as X-Idempotency-Key; reuse the same key on every retry of one intent. */
  idempotencyKey?: string;
}

export interface RequiredIdempotencyOptions extends CallOptions {
  idempotencyKey: string;
}

interface CallSpec<Res> extends IdempotentCallOptions {
  params?: Record<string, string>;
  body?: unknown;
  request?: Body<unknown>;
  response: z.ZodType<Res, unknown>;
}

export class ProviderClient {
  readonly #transport: ProviderTransport;

  /** The provider's origin (scheme, host, port): a presigned upload URL on it is the provider's own (provider/uploads.ts). */
  readonly origin: string;

  constructor(opts: ProviderClientOptions) {
    this.#transport = new ProviderTransport(opts);
    this.origin = new URL(opts.baseUrl).origin;
  }

  /** Last known rate windows per endpoint key (from X-RateLimit-* headers). */
  get rateBudget(): RateBudget {
    return this.#transport.rateBudget;
  }

  // --- Cards ---------------------------------------------------------------------------

  listCardBins(opts?: CallOptions): Promise<CardBin[]> {
    return this.#call(ENDPOINTS.listCardBins, { response: cardBinListAnswerSchema, ...opts });
  }

  /** Answers at once with status CREATING; the card is usable once CARD_CREATED arrives. */
  createCard(body: CreateCardRequest, opts?: IdempotentCallOptions): Promise<Card> {
    return this.#call(ENDPOINTS.createCard, { body, request: createCardRequest, response: cardAnswerSchema, ...opts });
  }

  getCard(cardId: string, opts?: CallOptions): Promise<Card> {
    return this.#call(ENDPOINTS.getCard, { params: { cardId }, response: cardAnswerSchema, ...opts });
  }

  /** Full PAN, CVV and expiry: never log the result or put it in workflow history. */
  getSensitiveCard(cardId: string, opts?: CallOptions): Promise<CardSensitive> {
    return this.#call(ENDPOINTS.getCardSensitive, { params: { cardId }, response: cardSensitiveAnswerSchema, ...opts });
  }

  fundCard(cardId: string, body: FundCardRequest, opts?: IdempotentCallOptions): Promise<BalanceMoveResult> {
    return this.#call(ENDPOINTS.fundCard, { params: { cardId }, body, request: fundCardRequest, response: balanceMoveAnswerSchema, ...opts });
  }

  withdrawFromCard(cardId: string, body: WithdrawFromCardRequest, opts?: IdempotentCallOptions): Promise<BalanceMoveResult> {
    return this.#call(ENDPOINTS.withdrawFromCard, { params: { cardId }, body, request: withdrawFromCardRequest, response: balanceMoveAnswerSchema, ...opts });
  }

  /** The recorded outcome of a funding, withdrawal, eSIM or payout call made with this key. */
  getOperation(idempotencyKey: string, opts?: CallOptions): Promise<Operation> {
    return this.#call(ENDPOINTS.getOperation, { params: { idempotencyKey }, response: operationAnswerSchema, ...opts });
  }

  // freeze, unfreeze, PIN, contact, DELETE: answers not shown. Any 2xx is success whatever its
  // body; the card's state comes from getCard (or the next webhook), never from these answers.

  freezeCard(cardId: string, opts?: CallOptions): Promise<void> {
    return this.#action(ENDPOINTS.freezeCard, { params: { cardId }, response: cardActionAnswerSchema, ...opts });
  }

  unfreezeCard(cardId: string, opts?: CallOptions): Promise<void> {
    return this.#action(ENDPOINTS.unfreezeCard, { params: { cardId }, response: cardActionAnswerSchema, ...opts });
  }

  updatePin(cardId: string, body: UpdateCardPinRequest, opts?: CallOptions): Promise<void> {
    return this.#action(ENDPOINTS.updateCardPin, { params: { cardId }, body, request: updateCardPinRequest, response: cardActionAnswerSchema, ...opts });
  }

  /** `extra`: fields we do not model, sent as they are. */
  updateContact(cardId: string, body: UpdateCardContactRequest, opts?: CallOptions): Promise<void> {
    return this.#action(ENDPOINTS.updateCardContact, { params: { cardId }, body, request: updateCardContactRequest, response: cardActionAnswerSchema, ...opts });
  }

  deleteCard(cardId: string, opts?: CallOptions): Promise<void> {
    return this.#action(ENDPOINTS.deleteCard, { params: { cardId }, response: cardActionAnswerSchema, ...opts });
  }

  // --- Wallet --------------------------------------------------------------------------

  getWalletBalance(opts?: CallOptions): Promise<WalletBalance> {
    return this.#call(ENDPOINTS.getWalletBalance, { response: walletBalanceAnswerSchema, ...opts });
  }

  // --- KYC -----------------------------------------------------------------------------

  /** Step 1 of an upload; see uploads.ts for the whole of it. */
  createPresignedUpload(body: PresignedUploadRequest, opts?: CallOptions): Promise<PresignedUpload> {
    return this.#call(ENDPOINTS.createPresignedUpload, { body, request: presignedUploadRequest, response: presignedUploadAnswerSchema, ...opts });
  }

  submitKycForm(body: KycFormRequest, opts?: CallOptions): Promise<KycSubmission> {
    return this.#call(ENDPOINTS.submitKycForm, { body, request: kycFormRequest, response: kycSubmissionAnswerSchema, ...opts });
  }

  /** @deprecated by the provider (removal 10 August 2026): use submitKycForm. */
  submitKycManual(body: KycManualRequest, opts?: CallOptions): Promise<KycSubmission> {
    return this.#call(ENDPOINTS.submitKycManual, { body, request: kycManualRequest, response: kycSubmissionAnswerSchema, ...opts });
  }

  startHostedKyc(body: KycAutoRequest, opts?: CallOptions): Promise<KycSubmission> {
    // The rule lets http:// to a loopback address through (workflow code cannot know where it runs):
    // only a provider on this machine, a developer's sandbox, may send a browser there.
    const loopback = typeof body?.redirectUrl === 'string' && callerUrlScheme(body.redirectUrl) === 'loopback-http';
    if (loopback && callerUrlScheme(this.origin) !== 'loopback-http') {
      return Promise.reject(localValidationFailed(ENDPOINTS.startHostedKyc.key, { redirectUrl: `${CALLER_URL_RULE}: the provider is not on this machine` }));
    }
    return this.#call(ENDPOINTS.startHostedKyc, { body, request: kycAutoRequest, response: kycSubmissionAnswerSchema, ...opts });
  }

  getCardholder(id: string, opts?: CallOptions): Promise<KycCardholder> {
    return this.#call(ENDPOINTS.getKycCardholder, { params: { id }, response: kycCardholderAnswerSchema, ...opts });
  }

  // --- Payouts -------------------------------------------------------------------------

  getPayout(merOrderNo: string, opts?: CallOptions): Promise<Payout> {
    return this.#call(ENDPOINTS.getPayout, { params: { merOrderNo }, response: payoutAnswerSchema, ...opts });
  }

  /** The key is required by the provider; a retry with it returns the original order. */
  createPayout(body: CreatePayoutRequest, opts: RequiredIdempotencyOptions): Promise<Payout> {
    return this.#call(ENDPOINTS.createPayout, { body, request: createPayoutRequest, response: payoutAnswerSchema, ...opts });
  }

  // --- eSIM ----------------------------------------------------------------------------

  listEsimPlans(opts?: CallOptions): Promise<EsimPlan[]> {
    return this.#call(ENDPOINTS.listEsimPlans, { response: esimPlanListAnswerSchema, ...opts });
  }

  /** Charges the wallet; answers ISSUED or PAID (then wait for ESIM_ISSUED or poll the order). */
  purchaseEsim(body: PurchaseEsimRequest, opts?: IdempotentCallOptions): Promise<EsimOrder> {
    return this.#call(ENDPOINTS.purchaseEsim, { body, request: purchaseEsimRequest, response: esimOrderAnswerSchema, ...opts });
  }

  rechargeEsim(body: RechargeEsimRequest, opts?: IdempotentCallOptions): Promise<EsimOrder> {
    return this.#call(ENDPOINTS.rechargeEsim, { body, request: rechargeEsimRequest, response: esimOrderAnswerSchema, ...opts });
  }

  /** Only the status is required; the order number is the one asked for when the answer leaves it out. */
  async getEsimOrder(orderNo: string, opts?: CallOptions): Promise<EsimOrder> {
    const order = await this.#call(ENDPOINTS.getEsimOrder, { params: { orderNo }, response: esimOrderLookupAnswerSchema, ...opts });
    return { ...order, orderNo: order.orderNo ?? orderNo };
  }

  getEsimUsage(esimNo: string, opts?: CallOptions): Promise<EsimUsage> {
    return this.#call(ENDPOINTS.getEsimUsage, { params: { esimNo }, response: esimUsageAnswerSchema, ...opts });
  }

  // --- Lifecycle -----------------------------------------------------------------------

  /** Closes the keep-alive connections once in-flight calls are done. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /** Nothing secret to show; keeps serialisation of the client explicit. */
  toJSON(): Record<string, unknown> {
    return { client: 'ProviderClient', transport: this.#transport.toJSON() };
  }

  /**
   * A card action: any 2xx is success, also one whose body is not our envelope at all (a 204, a
   * plain "OK"). A 2xx carrying a failure envelope (code ≠ 0) is still that failure.
   */
  async #action(endpoint: EndpointDef, spec: CallSpec<void>): Promise<void> {
    try {
      await this.#call(endpoint, spec);
    } catch (err) {
      const notEnvelope = isProviderError(err, 'InvalidResponse') && err.code === NOT_AN_ENVELOPE && err.status !== undefined && err.status < 300;
      if (!notEnvelope) throw err;
    }
  }

  /** Validate → one signed attempt → validate. Every method goes through here. */
  async #call<Res>(endpoint: EndpointDef, spec: CallSpec<Res>): Promise<Res> {
    const body = spec.request ? validateRequest(endpoint, spec.request, spec.body) : spec.body;
    if (endpoint.idempotency === 'required' && spec.idempotencyKey === undefined) {
      throw localValidationFailed(endpoint.key, { [IDEMPOTENCY_HEADER]: 'is required' });
    }
    const { status, data } = await this.#transport.request({
      endpointKey: endpoint.key,
      method: endpoint.method,
      path: endpointPath(endpoint, requireParams(endpoint, spec.params)),
      pathTemplate: endpoint.path,
      body,
      idempotencyKey: spec.idempotencyKey,
      timeoutMs: spec.timeoutMs,
    });
    return validateResponse(endpoint, spec.response, data, status);
  }
}

/**
 * The provider's rules, checked before sending; what is sent is the body with the fields we
 * model, and beside them the caller's explicit `extra` fields where the spec shows no shape.
 */
function validateRequest(endpoint: EndpointDef, request: Body<unknown>, body: unknown): unknown {
  const errors = request.errors(body);
  if (Object.keys(errors).length > 0) throw localValidationFailed(endpoint.key, errors);
  return flattenExtra(request.known(body));
}

/** An empty path parameter would address another endpoint (/cards/ instead of /cards/:id). */
function requireParams(endpoint: EndpointDef, params: Record<string, string> = {}): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== 'string' || value.length === 0) errors[name] = 'is required';
  }
  if (Object.keys(errors).length > 0) throw localValidationFailed(endpoint.key, errors);
  return params;
}

/**
 * A 2xx whose data does not match the schema fails as InvalidResponse. Only the paths
 * and zod issue codes are kept: the data may be a PAN and CVV. An unreadable answer to a GET
 * changed nothing: it is an error the next attempt (or the next poll) may retry.
 */
function validateResponse<Res>(endpoint: EndpointDef, schema: z.ZodType<Res, unknown>, data: unknown, status: number): Res {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const fields = Object.fromEntries(parsed.error.issues.map((i) => [i.path.map(String).join('.') || 'data', i.code]));
  const readOnly = endpoint.method === 'GET' ? { retryable: true, mayHaveTakenEffect: false } : {};
  throw invalidResponse(endpoint.key, status, 'RESPONSE_SCHEMA_MISMATCH', fields, readOnly);
}

export interface ProviderConfigSlice {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  timeoutMs: number;
}

/** The client for `config.provider`, signing with the default HMAC-SHA256 scheme (CONTRACTS §3). */
export function createProviderClient(
  provider: ProviderConfigSlice,
  extra: Omit<ProviderClientOptions, 'baseUrl' | 'signer' | 'timeoutMs'> = {},
): ProviderClient {
  const signer = new HmacSha256Scheme({ apiKey: provider.apiKey, secret: provider.apiSecret });
  return new ProviderClient({ baseUrl: provider.baseUrl, signer, timeoutMs: provider.timeoutMs, ...extra });
}
