/**
 * The control API (CONTRACTS §5): unsigned, loopback only, plain JSON (no envelope), never
 * rate limited and never touched by faults. Errors answer { error: CODE, message?, errors? }.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { PAYOUT_STATUSES } from '../../provider-api';
import { fieldErrorsFromZod } from '../../shared/zod-field-errors';
import { rawBodyOf, send } from '../api';
import { mergeSandboxConfig } from '../config';
import { cardView, expireCard, finishProvisioning, getCard, simulateTransaction } from '../domain/cards';
import { finishOrder, getOrder, orderView, setUsage, usageView } from '../domain/esim';
import { cardholderView, decideKyc } from '../domain/kyc';
import { payoutView, setPayoutStatus } from '../domain/payouts';
import { addBin, completeFailedOperation, forgetCard, removeBin, rewritePayoutStatus } from '../domain/drift';
import { ourPayoutStatus } from '../profiles';
import { ApiError } from '../errors';
import { CONTROL, InsufficientBalance, WALLET, cardAccount } from '../ledger';
import type { Sandbox } from '../sandbox';

class ControlError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message?: string,
    readonly errors?: Record<string, string>,
  ) {
    super(message ?? code);
  }
}

const schemas = {
  wallet: z.object({ amount: z.number('must be an integer number of cents').int('must be an integer number of cents').refine((n) => n !== 0, 'must not be 0') }),
  decision: z.object({ kycStatus: z.enum(['APPROVED', 'REJECTED'], 'must be APPROVED or REJECTED'), reason: z.string().max(256).optional() }),
  provisioning: z.object({ status: z.enum(['ENABLE', 'FAILED'], 'must be ENABLE or FAILED') }),
  pinCheck: z.object({ pin: z.string('must be a string of 4 digits').regex(/^\d{4}$/, 'must be a string of 4 digits') }),
  transaction: z.object({
    amount: z.number('must be a positive integer').int('must be a positive integer').positive('must be a positive integer'),
    merchantName: z.string('must be a string of 1 to 64 characters').min(1, 'must be a string of 1 to 64 characters').max(64, 'must be a string of 1 to 64 characters'),
    /** false: the spend happens but its CARD_TRANSACTION webhook is never sent. */
    webhook: z.boolean('must be true or false').optional(),
  }),
  bin: z.object({
    cardBinId: z.string('must be a string').regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of [A-Za-z0-9_-]'),
    bin: z.string('must be 6 digits').regex(/^\d{6}$/, 'must be 6 digits'),
    brand: z.string('must be a string').min(1, 'must not be empty'),
    issuingCountry: z.string('must be an ISO 3166-1 alpha-2 code').regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code'),
    currency: z.string('must be an ISO 4217 code').regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'),
    mobile: z.boolean().default(false),
    email: z.boolean().default(false),
    supportPin: z.boolean().default(false),
    requireKycCardholder: z.boolean().default(false),
  }),
  esimOutcome: z.object({ status: z.enum(['ISSUED', 'FAILED'], 'must be ISSUED or FAILED') }),
  esimUsage: z.object({ dataUsedMb: z.number('must be a non-negative integer').int('must be a non-negative integer').min(0, 'must be a non-negative integer') }),
  // Either spelling (CONTRACTS §8): SUCCESS and CANCELED are read as COMPLETED and CANCELLED.
  // At most a year: enough to pass any key cache the spec names (24 h), small enough to stay a safe integer when added.
  clock: z.object({
    advanceMs: z
      .number('must be a positive integer of milliseconds, at most 31536000000 (a year)')
      .int('must be a positive integer of milliseconds, at most 31536000000 (a year)')
      .positive('must be a positive integer of milliseconds, at most 31536000000 (a year)')
      .max(365 * 24 * 60 * 60 * 1000, 'must be a positive integer of milliseconds, at most 31536000000 (a year)'),
  }),
  payoutStatus: z.object({
    status: z.preprocess((v) => (typeof v === 'string' ? ourPayoutStatus(v) : v), z.enum(PAYOUT_STATUSES, `must be one of ${PAYOUT_STATUSES.join(', ')}, SUCCESS, CANCELED`)),
  }),
};

/** The request's JSON body (undefined when empty); 400 VALIDATION_FAILED when it is not JSON. */
function jsonBody(req: FastifyRequest): unknown {
  const raw = rawBodyOf(req);
  try {
    return raw ? JSON.parse(raw.toString('utf8')) : undefined;
  } catch {
    throw new ControlError(400, 'VALIDATION_FAILED', 'body must be valid JSON', { body: 'must be valid JSON' });
  }
}

function body<S extends z.ZodType>(req: FastifyRequest, schema: S): z.infer<S> {
  const parsed = schema.safeParse(jsonBody(req));
  if (!parsed.success) throw new ControlError(400, 'VALIDATION_FAILED', 'invalid fields', fieldErrorsFromZod(parsed.error));
  return parsed.data;
}

function conflictUnless(done: boolean, what: string): void {
  if (!done) throw new ControlError(409, 'INVALID_STATE', what);
}

type Handler = (req: FastifyRequest<{ Params: Record<string, string> }>) => unknown;

export function registerControlRoutes(app: FastifyInstance, sb: Sandbox): void {
  const route = (method: 'GET' | 'POST' | 'PUT', url: string, handler: Handler) =>
    app.route<{ Params: Record<string, string> }>({
      method,
      url: `/sandbox${url}`,
      handler: (req, reply) => answer(reply, () => handler(req)),
    });

  route('GET', '/health', () => ({ ok: true }));
  route('POST', '/reset', () => {
    sb.reset();
    return { ok: true };
  });
  route('GET', '/config', () => sb.config);
  route('PUT', '/config', (req) => {
    const result = mergeSandboxConfig(sb.config, jsonBody(req));
    if (!result.ok) throw new ControlError(400, 'VALIDATION_FAILED', `invalid configuration: ${Object.keys(result.errors).join(', ')}`, result.errors);
    sb.config = result.config;
    return sb.config;
  });

  // The idempotency keys' clock only (POST /cards forgets its keys after 24 h); never back, and reset() sets it back to 0.
  route('POST', '/clock', (req) => {
    const { advanceMs } = body(req, schemas.clock);
    sb.clockOffsetMs += advanceMs;
    return { offsetMs: sb.clockOffsetMs };
  });

  const wallet = () => ({ availableBalance: sb.ledger.balance(WALLET), currency: 'USD' });
  route('GET', '/wallet', wallet);
  route('POST', '/wallet', (req) => {
    const { amount } = body(req, schemas.wallet);
    try {
      if (amount > 0) sb.ledger.transfer({ kind: 'CREDIT', from: CONTROL, to: WALLET, amount, ref: 'control' });
      else sb.ledger.transfer({ kind: 'CREDIT', from: WALLET, to: CONTROL, amount: -amount, ref: 'control' });
    } catch (err) {
      if (err instanceof InsufficientBalance) throw new ControlError(422, 'INSUFFICIENT_FUNDS', 'the debit exceeds the wallet balance');
      throw err;
    }
    return wallet();
  });

  route('POST', '/kyc/:id/decision', (req) => {
    const { kycStatus, reason } = body(req, schemas.decision);
    cardholderView(sb, req.params.id); // 404 when unknown
    conflictUnless(decideKyc(sb, req.params.id, kycStatus, reason), 'cardholder is not PENDING');
    return cardholderView(sb, req.params.id);
  });

  route('POST', '/cards/:cardId/provisioning', (req) => {
    const { status } = body(req, schemas.provisioning);
    const card = getCard(sb, req.params.cardId);
    conflictUnless(finishProvisioning(sb, card.cardId, status), 'card is not CREATING');
    return cardView(sb, card);
  });
  // Whether the card's PIN is the one given, as a terminal would check it: the sandbox never shows a PIN (tests of issue 40).
  route('POST', '/cards/:cardId/pin-check', (req) => {
    const { pin } = body(req, schemas.pinCheck);
    const card = getCard(sb, req.params.cardId);
    return { cardId: card.cardId, pinSet: card.pin !== undefined, matches: card.pin === pin };
  });
  route('POST', '/cards/:cardId/transactions', (req) => {
    const { amount, merchantName, webhook } = body(req, schemas.transaction);
    return simulateTransaction(sb, getCard(sb, req.params.cardId), amount, merchantName, webhook !== false);
  });
  // Differences the provider makes without telling us (issue 22: seeds for reconciliation).
  route('POST', '/cards/:cardId/forget', (req) => {
    forgetCard(sb, req.params.cardId);
    return { ok: true };
  });
  route('POST', '/operations/:key/complete', (req) => completeFailedOperation(sb, req.params.key));
  route('POST', '/payouts/:merOrderNo/rewrite', (req) => {
    const { status } = body(req, schemas.payoutStatus);
    return payoutView(rewritePayoutStatus(sb, req.params.merOrderNo, status));
  });
  route('POST', '/card-bins', (req) => addBin(sb, body(req, schemas.bin)));
  route('POST', '/card-bins/:cardBinId/remove', (req) => {
    removeBin(sb, req.params.cardBinId);
    return { ok: true };
  });
  route('POST', '/cards/:cardId/expire', (req) => {
    const card = getCard(sb, req.params.cardId);
    expireCard(sb, card);
    return cardView(sb, card);
  });

  route('POST', '/esim/orders/:orderNo/outcome', (req) => {
    const { status } = body(req, schemas.esimOutcome);
    const order = getOrder(sb, req.params.orderNo);
    conflictUnless(finishOrder(sb, order.orderNo, status), 'order is not PAID or ISSUING');
    return orderView(sb, order);
  });
  route('POST', '/esim/esims/:esimNo/usage', (req) => {
    const { dataUsedMb } = body(req, schemas.esimUsage);
    const esim = sb.state.esims.get(req.params.esimNo);
    if (!esim?.issued) throw new ControlError(404, 'NOT_FOUND', 'eSIM not found');
    esim.syncedAt = sb.now();
    setUsage(sb, esim, dataUsedMb);
    return usageView(esim);
  });

  route('POST', '/payouts/:merOrderNo/status', (req) => {
    const { status } = body(req, schemas.payoutStatus);
    return payoutView(setPayoutStatus(sb, req.params.merOrderNo, status));
  });

  route('GET', '/ledger', () => ({
    wallet: sb.ledger.balance(WALLET),
    cards: [...sb.state.cards.keys()].map((cardId) => ({ cardId, availableBalance: sb.ledger.balance(cardAccount(cardId)) })),
    totals: sb.ledger.totals(),
    entryCount: sb.ledger.entries().length,
    violations: sb.ledger.violations(),
  }));
  // Every move of money, append-only: what a books check compares our records with.
  route('GET', '/ledger/entries', () => ({ entries: sb.ledger.entries() }));
  route('GET', '/webhooks', () => ({ deliveries: sb.webhooks.log() }));
  route('GET', '/stats', () => ({ endpoints: Object.fromEntries(sb.stats) }));
}

/** Runs a control handler and maps its errors to plain JSON. */
async function answer(reply: FastifyReply, run: () => unknown): Promise<FastifyReply> {
  try {
    return send(reply, 200, await run());
  } catch (err) {
    if (err instanceof ControlError) return send(reply, err.status, { error: err.code, message: err.message, ...(err.errors ? { errors: err.errors } : {}) });
    if (err instanceof ApiError) {
      const status = err.code === 'INVALID_STATE' ? 409 : err.status;
      return send(reply, status, { error: err.code, message: err.message, ...(err.errors ? { errors: err.errors } : {}) });
    }
    return send(reply, 500, { error: 'INTERNAL_ERROR' });
  }
}
