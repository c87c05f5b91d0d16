/**
 * The /open-api/v1 pipeline every endpoint goes through, in the order a real edge applies it:
 * IP whitelist → signature over the exact bytes → nonce → rate limit → faults → media type
 * and JSON → the route. Every answer is the envelope and carries the X-RateLimit headers.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  API_BASE_PATH, ENDPOINTS, IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE,
  type Body, type EndpointDef, type EndpointKey, type FieldErrors,
} from '../provider-api';
import { ApiError, errorBody, successBody, validationFailed, type ApiResult, type ErrorBody } from './errors';
import type { IdempotencyRule, KeyHandle } from './idempotency';
import type { RateDecision } from './rate-limit';
import type { Sandbox } from './sandbox';
import { presentAnswer } from './profiles';
import { endpointName } from './config';

declare module 'fastify' {
  interface FastifyRequest {
    /** Which endpoint answered, for GET /sandbox/stats. */
    endpointKey?: string;
  }
}

/** What a route handler receives. */
export interface ApiCall {
  sandbox: Sandbox;
  endpoint: EndpointDef;
  params: Record<string, string>;
  /** The parsed JSON body, or undefined when none was sent. */
  body: unknown;
  headers: IncomingHttpHeaders;
}

export type ApiHandler = (call: ApiCall) => Promise<ApiResult> | ApiResult;
export type ApiHandlers = Record<EndpointKey, ApiHandler>;

const INTERNAL = () => errorBody(500, 'INTERNAL_ERROR');

/** Registers one fastify route per ENDPOINTS entry; the type makes a missing handler a compile error. */
export function registerApiRoutes(app: FastifyInstance, sandbox: Sandbox, handlers: ApiHandlers): void {
  for (const endpoint of Object.values(ENDPOINTS) as EndpointDef[]) {
    const handler = handlers[endpoint.key as EndpointKey];
    app.route({
      method: endpoint.method,
      url: API_BASE_PATH + endpoint.path,
      handler: (req, reply) => serveApi(sandbox, endpoint, handler, req, reply),
    });
  }
}

async function serveApi(sb: Sandbox, endpoint: EndpointDef, handler: ApiHandler, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  req.endpointKey = endpoint.key;
  // Every answer is worded by the profile (profiles.ts); the contract profile leaves it as is.
  const answer = (status: number, body: unknown) => send(reply, status, presentAnswer(sb.config.profile, endpoint.key as EndpointKey, body));
  const raw = rawBodyOf(req);
  const rejection = authenticate(sb, req, raw);
  if (rejection) {
    setRateHeaders(reply, sb.rateLimiter.peek(sb.apiKey, endpoint.key, endpoint.rateLimitTier));
    return answer(rejection.status, rejection.body);
  }
  const rate = sb.rateLimiter.take(sb.apiKey, endpoint.key, endpoint.rateLimitTier);
  setRateHeaders(reply, rate);
  if (!rate.allowed) {
    const seconds = Math.max(1, Math.ceil((rate.resetAt - sb.now()) / 1000));
    return answer(429, errorBody(429, `RATE_LIMITED: rate limit exceeded, retry in ${seconds} seconds`));
  }

  const { faults } = sb.config;
  await sb.timers.sleep(faults.latencyMs);
  const fault = pickFault(sb, endpoint);
  if (fault === 'refused') return answer(...refusal(endpointFaults(sb, endpoint)?.refuseStatus ?? 429));
  if (fault === 'error-before') return answer(500, INTERNAL());
  if (fault === 'hang-before') {
    await sb.timers.sleep(faults.hangMs);
    return answer(500, INTERNAL());
  }

  let status: number;
  let body: unknown;
  try {
    const call: ApiCall = { sandbox: sb, endpoint, params: req.params as Record<string, string>, body: parseJsonBody(req, raw), headers: req.headers };
    const result = await handler(call);
    status = result.status;
    body = successBody(result.data);
  } catch (err) {
    // Never leak internals: anything that is not an ApiError is a bare INTERNAL_ERROR.
    const known = err instanceof ApiError ? err : undefined;
    status = known?.status ?? 500;
    body = known?.body ?? INTERNAL();
  }
  // Half of the faults strike after the side effect: only an idempotent retry is then safe.
  if (fault === 'error-after') return answer(500, INTERNAL());
  if (fault === 'hang-after') await sb.timers.sleep(faults.hangMs);
  if (fault === 'truncate-after') return sendCutOff(reply, status, presentAnswer(sb.config.profile, endpoint.key as EndpointKey, body));
  if (status >= 400 && endpointFaults(sb, endpoint)?.opaqueErrors) return sendOpaque(reply, status);
  return answer(status, body);
}

type Fault = 'none' | 'error-before' | 'error-after' | 'hang-before' | 'hang-after' | 'truncate-after' | 'refused';

/** A refusal before anything happens (fault `refuseRate`), worded as the provider words it. */
function refusal(status: 403 | 404 | 429): [number, unknown] {
  if (status === 403) return [403, new ApiError('INVALID_SIGNATURE').body];
  if (status === 404) return [404, errorBody(404, 'NOT_FOUND')];
  return [429, errorBody(429, 'RATE_LIMITED: rate limit exceeded, retry in 1 seconds')];
}

/** Faults struck per endpoint's fault settings: a new configuration is a new object, so its count starts at 0. */
const faultsStruck = new WeakMap<object, number>();

function pickFault(sb: Sandbox, endpoint: EndpointDef): Fault {
  const own = endpointFaults(sb, endpoint);
  if (own?.maxFaults !== undefined && (faultsStruck.get(own) ?? 0) >= own.maxFaults) return own.refuseAfterFaults ? 'refused' : 'none';
  const fault = drawFault(sb, own);
  if (own && fault !== 'none') faultsStruck.set(own, (faultsStruck.get(own) ?? 0) + 1);
  return fault;
}

function drawFault(sb: Sandbox, own: ReturnType<typeof endpointFaults>): Fault {
  const errorRate = own?.errorRate ?? sb.config.faults.errorRate;
  const hangRate = own?.hangRate ?? sb.config.faults.hangRate;
  const r = sb.random();
  const half = () => (own?.afterEffect || (!own?.beforeEffect && sb.random() >= 0.5) ? 'after' : 'before');
  if (r < errorRate) return `error-${half()}`;
  if (r < errorRate + hangRate) return `hang-${half()}`;
  if (r < errorRate + hangRate + (own?.truncateRate ?? 0)) return 'truncate-after';
  if (r < errorRate + hangRate + (own?.truncateRate ?? 0) + (own?.refuseRate ?? 0)) return 'refused';
  return 'none';
}

/** An error answer whose body is not the envelope (a proxy's page): only its status can be read. */
function sendOpaque(reply: FastifyReply, status: number): FastifyReply {
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').send(`<html><body><h1>${status}</h1></body></html>`);
}

function endpointFaults(sb: Sandbox, endpoint: EndpointDef) {
  return sb.config.faults.endpoints[endpointName(endpoint)];
}

/** An answer cut off halfway through its JSON, as a connection dropped after the headers would leave it. */
function sendCutOff(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  const text = JSON.stringify(body);
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(text.slice(0, Math.floor(text.length / 2)));
}

function authenticate(sb: Sandbox, req: FastifyRequest, raw: Buffer | undefined): ApiError | undefined {
  if (!ipAllowed(req.socket.remoteAddress, sb.config.whitelist)) return new ApiError('IP_NOT_WHITELISTED');
  if (req.headers['x-api-key'] !== sb.apiKey) return new ApiError('INVALID_SIGNATURE');
  const verdict = sb.signer.verify({ method: req.method, pathWithQuery: req.raw.url ?? req.url, body: raw }, req.headers);
  if (!verdict.ok) return new ApiError('INVALID_SIGNATURE');
  if (verdict.nonce.length < 16) return new ApiError('INVALID_SIGNATURE');
  if (!sb.nonces.claim(verdict.nonce)) return new ApiError('NONCE_REUSED', 'X-Nonce was already used');
  return undefined;
}

export function normaliseIp(ip: string | undefined): string {
  if (!ip) return '';
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

export function isLoopback(ip: string | undefined): boolean {
  const n = normaliseIp(ip);
  return n === '::1' || n.startsWith('127.');
}

function ipAllowed(ip: string | undefined, whitelist: string[]): boolean {
  if (whitelist.length === 0) return isLoopback(ip);
  const n = normaliseIp(ip);
  return whitelist.some((allowed) => normaliseIp(allowed) === n);
}

export function rawBodyOf(req: FastifyRequest): Buffer | undefined {
  return Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : undefined;
}

function parseJsonBody(req: FastifyRequest, raw: Buffer | undefined): unknown {
  if (!raw) return undefined;
  const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw validationFailed({ body: 'must be valid JSON' });
  }
}

export function setRateHeaders(reply: FastifyReply, rate: RateDecision): void {
  reply.header('X-RateLimit-Limit', String(rate.limit));
  reply.header('X-RateLimit-Remaining', String(rate.remaining));
  reply.header('X-RateLimit-Reset', String(rate.resetAt));
}

export function send(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}

// ---------------------------------------------------------------------------------------
// Matching paths to endpoints outside the router (404 vs 405, headers on early errors)
// ---------------------------------------------------------------------------------------

const TEMPLATES = (Object.values(ENDPOINTS) as EndpointDef[]).map((e) => ({
  endpoint: e,
  re: new RegExp(`^${API_BASE_PATH}${e.path.replace(/:[A-Za-z]+/g, '[^/]+')}/?$`),
}));

/** Endpoints whose path template matches (any method). */
export function endpointsForPath(path: string): EndpointDef[] {
  const p = path.split('?')[0];
  return TEMPLATES.filter((t) => t.re.test(p)).map((t) => t.endpoint);
}

/** The rate-limit headers an answer given outside a route should carry. */
export function rateHeadersForUnrouted(sb: Sandbox, reply: FastifyReply, method: string, path: string): void {
  const candidates = endpointsForPath(path);
  const endpoint = candidates.find((e) => e.method === method) ?? candidates[0];
  setRateHeaders(reply, sb.rateLimiter.peek(sb.apiKey, endpoint?.key ?? 'unmatched', endpoint?.rateLimitTier ?? 'general'));
}

// ---------------------------------------------------------------------------------------
// Validation and idempotency helpers for route handlers
// ---------------------------------------------------------------------------------------

/** Validates the X-Idempotency-Key header against the endpoint's policy. */
function idempotencyKeyOf(call: ApiCall): { key?: string; errors: FieldErrors } {
  const header = call.headers['x-idempotency-key'];
  const value = Array.isArray(header) ? header[0] : header;
  // A provider that ignores the key on this endpoint (fault knob): every call is a new request.
  if (endpointFaults(call.sandbox, call.endpoint)?.ignoreIdempotencyKey) return { errors: {} };
  if (value === undefined) {
    return call.endpoint.idempotency === 'required' ? { errors: { [IDEMPOTENCY_HEADER]: 'is required' } } : { errors: {} };
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(value)) return { errors: { [IDEMPOTENCY_HEADER]: IDEMPOTENCY_KEY_RULE } };
  return { key: value, errors: {} };
}

/**
 * Validates body and idempotency key together and throws one 400 naming every bad field.
 * `more` adds rules that need state (a BIN's conditions, token checks); the request's own
 * rule wins when both name a field. The body handed on holds only the fields the provider knows.
 */
export function validate<T>(call: ApiCall, request: Body<T>, more?: (raw: Record<string, unknown>) => FieldErrors): { data: T; key?: string } {
  const errors = request.errors(call.body);
  const isObject = typeof call.body === 'object' && call.body !== null && !Array.isArray(call.body);
  if (more && isObject) {
    for (const [field, text] of Object.entries(more(call.body as Record<string, unknown>))) errors[field] ??= text;
  }
  const key = call.endpoint.idempotency === 'none' ? { errors: {} } : idempotencyKeyOf(call);
  Object.assign(errors, key.errors);
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
  return { data: request.known(call.body as T), key: key.key };
}

/**
 * Runs a write under its idempotency key (if any). The key is claimed before anything is
 * awaited; operationProcessingMs then keeps it in progress before the side effect.
 */
export function idempotent(
  call: ApiCall,
  key: string | undefined,
  rule: IdempotencyRule,
  work: (handle: KeyHandle | undefined) => Promise<ApiResult> | ApiResult,
  scope?: string,
): Promise<ApiResult> {
  const sb = call.sandbox;
  return sb.idempotency.execute({ key, endpointKey: call.endpoint.key, scope, body: call.body, rule }, async (handle) => {
    await sb.timers.sleep(sb.config.operationProcessingMs);
    return work(handle);
  });
}

export type { ErrorBody };
