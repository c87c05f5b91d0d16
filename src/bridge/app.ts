/**
 * The webhook-to-signal bridge: the one public endpoint of our system. Each webhook is
 * handled in a fixed order: raw body (size-capped), signature over those bytes (constant
 * time, timestamp tolerance), a delivery already accepted, JSON, then signal-with-start to
 * the entity's workflow. 2xx is answered only after Temporal accepted the signal; when
 * Temporal cannot take it within the deadline the answer is 503, always within that deadline,
 * so the provider (which waits 10 s) redelivers.
 *
 * A nonce is consumed only by a 2xx: a delivery answered 503 and re-sent byte for byte is
 * accepted; one already accepted and re-sent byte for byte is answered 200 again and not
 * applied twice (the entity workflow also de-duplicates by eventId). A genuinely signed delivery
 * whose timestamp is stale is judged by its content instead (late.ts).
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { trace, type Tracer } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import { NonceCache, type SigningScheme } from '../provider/signing';
import { providerEventSignal } from '../shared/messages';
import { signalEntity, signalRunningEntity } from '../temporal/entity-signals';
import { silentLogger, type Logger } from '../logging';
import type { BridgeMetrics, WebhookStep } from '../observability/metrics';
import { ATTR_PROVIDER_EVENT_TYPE, inServerSpan } from '../observability/tracing';
import { parseEvent } from './events';
import { entityFor } from './routing';
import { LATE_HORIZON_MS, judgeLateEvent } from './late';
import type { ProviderEvent } from '../shared/types';
import type { EntityRef } from '../temporal/entity-signals';

export const WEBHOOK_PATH = '/webhooks/provider';
/** Provider events are small; anything larger is refused before it is read whole. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;
/** The provider waits 10 s for our answer; Temporal must have taken the signal well before. */
const SIGNAL_DEADLINE_MS = 5000;

export interface BridgeOptions {
  temporal: Client;
  taskQueue: string;
  /** Verifies with the webhook secret. */
  verifier: SigningScheme;
  logger?: Logger;
  nonces?: NonceCache;
  signalDeadlineMs?: number;
  /** The path signatures cover when a proxy rewrote it (BRIDGE_SIGNED_PATH); the request's own path otherwise. */
  signedPath?: string;
  metrics?: BridgeMetrics;
  /** With tracing on: each webhook gets a server span, parent of the signal-with-start's span. */
  tracer?: Tracer;
  /** The clock a late delivery's age is read against (the verifier's; tests inject one). */
  now?: () => number;
}

const noMetrics: BridgeMetrics = { webhook: () => undefined, signalled: () => undefined, step: () => undefined };

export function buildBridge(opts: BridgeOptions): FastifyInstance {
  const log = opts.logger ?? silentLogger;
  const nonces = opts.nonces ?? new NonceCache();
  const deadlineMs = opts.signalDeadlineMs ?? SIGNAL_DEADLINE_MS;
  const metrics = opts.metrics ?? noMetrics;
  const app = Fastify({
    logger: false,
    bodyLimit: MAX_WEBHOOK_BYTES,
    return503OnClosing: true,
    // Slowloris: the one internet-facing listener must not let a client that trickles its request (or
    // never reads our answer) hold a socket for as long as it likes. The provider sends a 256 KiB body
    // at most and waits 10 s for our answer, so a request not received whole in 15 s is no webhook
    // of its (Node checks this every 30 s: a little later at worst); a socket silent for 20 s at any
    // point is closed; an idle kept-alive one after 72 s, above the 60 s idle timeout of the usual
    // proxies in front, so none reuses a socket we are closing.
    requestTimeout: 15_000,
    connectionTimeout: 20_000,
    keepAliveTimeout: 72_000,
  });

  // Keep the exact bytes: the signature covers them, so nothing may parse before it is checked.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Closing: fastify answers requests that arrive from then on with `Connection: close`, but one in
  // flight when close began is answered keep-alive, and server.close() then waits until its client
  // drops the now idle socket: the provider's client keeps it for our Keep-Alive hint, 72 s (undici:
  // 70 s), and a SIGTERM or a test's close waited that long. Answered with `Connection: close`, the
  // socket ends with its answer.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  app.get('/health', async () => ({ ok: true }));

  // Where an accepted webhook's time goes (bridge_webhook_step_seconds): from the request's arrival, each step's lap.
  app.addHook('onRequest', (req, _reply, done) => {
    lapsOf.set(req, new Laps(metrics));
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    if (reply.statusCode === 200) lapsOf.get(req)?.answered();
    done();
  });

  const receive = async (req: FastifyRequest, reply: FastifyReply) => {
    const started = Date.now();
    const laps = lapsOf.get(req)?.lap('read');
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const verdict = opts.verifier.verify({ method: 'POST', pathWithQuery: signedPathOf(req.url, opts.signedPath), body: raw }, req.headers);
    laps?.lap('verify');
    if (!verdict.ok && !verdict.genuine) {
      metrics.webhook('refused', verdict.reason);
      return refuse(reply, 401, verdict.reason, log, started);
    }
    const nonce = verdict.ok ? verdict.nonce : verdict.genuine!.nonce;
    if (nonces.has(nonce)) {
      metrics.webhook('duplicate');
      log.info('webhook already accepted: answered again, not applied again', { ms: Date.now() - started });
      laps?.discard();
      return reply.code(200).send({ ok: true, duplicate: true });
    }
    laps?.lap('dedupe');

    const parsed = parseEvent(raw, started);
    if ('errors' in parsed) {
      metrics.webhook('malformed');
      log.warn('webhook refused', { status: 400, reason: 'MALFORMED', fields: Object.keys(parsed.errors), ms: Date.now() - started });
      return reply.code(400).send({ error: 'MALFORMED_EVENT', errors: parsed.errors });
    }
    const { event } = parsed;
    trace.getActiveSpan()?.setAttribute(ATTR_PROVIDER_EVENT_TYPE, event.eventType);
    const entity = entityFor(event);
    laps?.lap('decode');
    const late = !verdict.ok;
    // A late delivery's judgement is a step of its own, not one of the on-time path's.
    if (late) laps?.discard();
    if (late && !(await admitLate(event, entity, verdict.genuine!.timestamp, nonce, reply, started))) return reply;
    try {
      // On time: signal-with-start (the event may come before the flow that waits for it). Late: the running entity workflow only.
      const deliver = late ? signalRunningEntity : signalEntity;
      const workflowId = await withinDeadline(deadlineMs, (deadline) =>
        opts.temporal.connection.withDeadline(deadline, () => deliver(opts.temporal, opts.taskQueue, entity, providerEventSignal, [event])),
      );
      nonces.claim(nonce);
      laps?.lap('signal');
      metrics.webhook('accepted', late ? 'LATE' : undefined);
      metrics.signalled((Date.now() - started) / 1000);
      log.info('webhook delivered', { eventId: event.eventId, eventType: event.eventType, derivedId: parsed.derivedId, workflowId, ms: Date.now() - started });
      return reply.code(200).send({ ok: true, eventId: event.eventId, workflowId, ...(late ? { late: true } : {}) });
    } catch (err) {
      metrics.webhook('unavailable');
      log.error('webhook not delivered: Temporal did not take the signal', {
        eventId: event.eventId,
        eventType: event.eventType,
        error: (err as Error).name,
        ms: Date.now() - started,
      });
      return reply.code(503).send({ error: 'TEMPORARILY_UNAVAILABLE' });
    }
  };
  /** A genuinely signed delivery with a stale timestamp (late.ts): true to let it through, else answered here. */
  const admitLate = async (event: ProviderEvent, entity: EntityRef, timestamp: number, nonce: string, reply: FastifyReply, started: number): Promise<boolean> => {
    // Older than the provider's redelivery could make it: a replay, refused without asking anyone.
    if ((opts.now ?? Date.now)() - timestamp > LATE_HORIZON_MS) {
      metrics.webhook('refused', 'STALE_TIMESTAMP');
      await refuse(reply, 401, 'STALE_TIMESTAMP', log, started);
      return false;
    }
    const judged = await withinDeadline(deadlineMs, (deadline) => opts.temporal.connection.withDeadline(deadline, () => judgeLateEvent(opts.temporal, entity, event))).catch(
      (err: Error) => err,
    );
    const ids = { eventId: event.eventId, eventType: event.eventType, ms: Date.now() - started };
    if (judged instanceof Error) {
      metrics.webhook('unavailable');
      log.error('late webhook not judged: Temporal did not answer', { ...ids, error: judged.name });
      await reply.code(503).send({ error: 'TEMPORARILY_UNAVAILABLE' });
      return false;
    }
    if (judged === 'applied') {
      // Its nonce is claimed too: a replay of the same bytes is answered from the cache, not judged again.
      nonces.claim(nonce);
      metrics.webhook('duplicate', 'LATE');
      log.info('late webhook already applied: answered again, not applied again', ids);
      await reply.code(200).send({ ok: true, duplicate: true });
      return false;
    }
    if (judged === 'out-of-order' || judged === 'no-entity') {
      metrics.webhook('refused', 'STALE_TIMESTAMP');
      await refuse(reply, 401, 'STALE_TIMESTAMP', log, started);
      return false;
    }
    log.info('late webhook: signed, not applied yet and in order, so let through', ids);
    return true;
  };

  app.post(WEBHOOK_PATH, (req, reply) => inServerSpan(opts.tracer, 'POST', WEBHOOK_PATH, () => receive(req, reply), () => reply.statusCode));

  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: 'NOT_FOUND', path: req.url.split('?')[0] }));
  app.setErrorHandler((err: { statusCode?: number; code?: string }, _req, reply) => {
    // Fastify's own refusals (oversized body, aborted upload) keep their status; nothing internal leaks.
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) log.error('bridge error', { code: err.code });
    return reply.code(status).send({ error: status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 500 ? 'INTERNAL_ERROR' : (err.code ?? 'BAD_REQUEST') });
  });
  return app;
}

/** One request's laps: each step's time from the end of the one before, observed once the 2xx is written. */
class Laps {
  readonly #metrics: BridgeMetrics;
  readonly #laps: Array<[WebhookStep, number]> = [];
  #last = performance.now();
  #discarded = false;

  constructor(metrics: BridgeMetrics) {
    this.#metrics = metrics;
  }

  lap(step: WebhookStep): this {
    const now = performance.now();
    this.#laps.push([step, (now - this.#last) / 1000]);
    this.#last = now;
    return this;
  }

  /** Not an on-time acceptance (a duplicate, a late delivery): its laps say nothing of the path measured. */
  discard(): void {
    this.#discarded = true;
  }

  answered(): void {
    if (this.#discarded || this.#laps.length === 0) return;
    this.lap('answer');
    for (const [step, seconds] of this.#laps) this.#metrics.step(step, seconds);
  }
}

const lapsOf = new WeakMap<FastifyRequest, Laps>();

/** The configured path in place of the request's (a proxy rewrote it), with the request's own query. */
export function signedPathOf(requestUrl: string, signedPath: string | undefined): string {
  if (signedPath === undefined) return requestUrl;
  const q = requestUrl.indexOf('?');
  return q < 0 ? signedPath : signedPath + requestUrl.slice(q);
}

/**
 * Settles with `work`, or rejects when the deadline passes first, whatever the connection is
 * doing (a gRPC deadline alone does not bound a client that is waiting to reconnect).
 */
async function withinDeadline<T>(ms: number, work: (deadline: number) => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('signal deadline passed'), { name: 'DeadlineExceeded' })), ms);
  });
  try {
    return await Promise.race([work(Date.now() + ms), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function refuse(reply: FastifyReply, status: number, reason: string, log: Logger, started: number) {
  log.warn('webhook refused', { status, reason, ms: Date.now() - started });
  return reply.code(status).send({ error: 'UNAUTHORIZED', reason });
}
