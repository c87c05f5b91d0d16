/**
 * The webhook-to-signal bridge: the one public endpoint of our system. Each webhook is
 * handled in a fixed order: raw body (size-capped), signature over those bytes (constant
 * time, timestamp tolerance), nonce replay, JSON and schema, then signal-with-start to the
 * entity's workflow. 2xx is answered only after Temporal accepted the signal; when Temporal
 * cannot be reached in time the answer is 503, so the provider redelivers.
 */
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { NonceCache, type SigningScheme } from '../provider/signing';
import { webhookEventSchema, fieldErrorsFromZod } from '../provider/schemas';
import { providerEventSignal } from '../shared/messages';
import type { ProviderEvent } from '../shared/types';
import { signalEntity } from '../temporal/entity-signals';
import { silentLogger, type Logger } from '../logging';
import { entityFor } from './routing';

export const WEBHOOK_PATH = '/webhooks/provider';
/** Provider events are small; anything larger is refused before it is read whole. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;
/** The provider waits 10 s for our answer; Temporal must have taken the signal well before. */
const SIGNAL_DEADLINE_MS = 5000;

const KNOWN_EVENT_TYPES = new Set(webhookEventSchema.options.map((o) => o.shape.eventType.value as string));

/** What every event has, whatever its type: unknown types are kept with this much checked. */
const envelopeSchema = z.object({
  eventId: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'),
  eventType: z.string().min(1, 'is required').max(64, 'must be at most 64 characters'),
  createdAt: z.number().int('must be epoch milliseconds'),
  data: z.record(z.string(), z.unknown()),
});

export interface BridgeOptions {
  temporal: Client;
  taskQueue: string;
  /** Verifies with the webhook secret. */
  verifier: SigningScheme;
  logger?: Logger;
  nonces?: NonceCache;
  signalDeadlineMs?: number;
}

export function buildBridge(opts: BridgeOptions): FastifyInstance {
  const log = opts.logger ?? silentLogger;
  const nonces = opts.nonces ?? new NonceCache();
  const app = Fastify({ logger: false, bodyLimit: MAX_WEBHOOK_BYTES, return503OnClosing: true });

  // Keep the exact bytes: the signature covers them, so nothing may parse before it is checked.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.get('/health', async () => ({ ok: true }));

  app.post(WEBHOOK_PATH, async (req, reply) => {
    const started = Date.now();
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const verdict = opts.verifier.verify({ method: 'POST', pathWithQuery: req.url, body: raw }, req.headers);
    if (!verdict.ok) return refuse(reply, 401, verdict.reason, log, started);
    if (!nonces.claim(verdict.nonce)) return refuse(reply, 401, 'NONCE_REUSED', log, started);

    const parsed = parseEvent(raw);
    if ('errors' in parsed) {
      log.warn('webhook refused', { status: 400, reason: 'MALFORMED', fields: Object.keys(parsed.errors), ms: Date.now() - started });
      return reply.code(400).send({ error: 'MALFORMED_EVENT', errors: parsed.errors });
    }
    const event = parsed.event;
    const entity = entityFor(event);
    try {
      const deadline = Date.now() + (opts.signalDeadlineMs ?? SIGNAL_DEADLINE_MS);
      const workflowId = await opts.temporal.connection.withDeadline(deadline, () =>
        signalEntity(opts.temporal, opts.taskQueue, entity, providerEventSignal, [event]),
      );
      log.info('webhook delivered', { eventId: event.eventId, eventType: event.eventType, workflowId, ms: Date.now() - started });
      return reply.code(200).send({ ok: true, eventId: event.eventId, workflowId });
    } catch (err) {
      log.error('webhook not delivered: Temporal did not take the signal', {
        eventId: event.eventId,
        eventType: event.eventType,
        error: (err as Error).name,
        ms: Date.now() - started,
      });
      return reply.code(503).send({ error: 'TEMPORARILY_UNAVAILABLE' });
    }
  });

  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: 'NOT_FOUND', path: req.url.split('?')[0] }));
  app.setErrorHandler((err: { statusCode?: number; code?: string }, _req, reply) => {
    // Fastify's own refusals (oversized body, aborted upload) keep their status; nothing internal leaks.
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) log.error('bridge error', { code: err.code });
    return reply.code(status).send({ error: status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 500 ? 'INTERNAL_ERROR' : (err.code ?? 'BAD_REQUEST') });
  });
  return app;
}

function refuse(reply: FastifyReply, status: number, reason: string, log: Logger, started: number) {
  log.warn('webhook refused', { status, reason, ms: Date.now() - started });
  return reply.code(status).send({ error: 'UNAUTHORIZED', reason });
}

/** Known types are checked against their schema; unknown ones only against the envelope. */
export function parseEvent(raw: Buffer): { event: ProviderEvent } | { errors: Record<string, string> } {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    return { errors: { body: 'must be a JSON object' } };
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) return { errors: fieldErrorsFromZod(envelope.error) };
  if (!KNOWN_EVENT_TYPES.has(envelope.data.eventType)) return { event: envelope.data };
  const typed = webhookEventSchema.safeParse(json);
  if (!typed.success) return { errors: fieldErrorsFromZod(typed.error) };
  return { event: typed.data as ProviderEvent };
}
