/**
 * Builds the sandbox's fastify app (no port is opened here). Bodies are kept as raw bytes
 * by one catch-all parser, so signatures are checked over exactly what was sent before any
 * JSON parsing; every failure, including the framework's own, answers the envelope.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { API_BASE_PATH } from '../provider-api';
import { endpointsForPath, isLoopback, rateHeadersForUnrouted, registerApiRoutes, send } from './api';
import { ApiError, errorBody } from './errors';
import { lingerUntilRequestEnds } from './lingering-close';
import { cardRoutes } from './routes/cards';
import { registerControlRoutes } from './routes/control';
import { esimRoutes } from './routes/esim';
import { kycRoutes } from './routes/kyc';
import { payoutRoutes } from './routes/payouts';
import { registerUploadRoutes } from './routes/uploads';
import { walletRoutes } from './routes/wallet';
import type { Sandbox } from './sandbox';

export const API_BODY_LIMIT = 1024 * 1024;

export function buildSandboxApp(sb: Sandbox): FastifyInstance {
  // No logger: request bodies and card data must never reach a log.
  const app = Fastify({ logger: false, bodyLimit: API_BODY_LIMIT, forceCloseConnections: true, exposeHeadRoutes: false, routerOptions: { maxParamLength: 200 } });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', async (req, reply) => {
    if (isControlPath(req.url) && !isLoopback(req.socket.remoteAddress)) {
      return send(reply, 403, { error: 'FORBIDDEN', message: 'the control API answers on loopback only' });
    }
  });
  app.addHook('onResponse', async (req, reply) => {
    const key = req.endpointKey ?? (req.url.startsWith(API_BASE_PATH) ? 'unmatched' : undefined);
    if (key) sb.recordAnswer(key, reply.statusCode);
  });
  // An answer given before the body has fully arrived (413 above all) is held open until the
  // rest is read, so the client gets it instead of a reset.
  app.addHook('onSend', async (req, reply, payload) => lingerUntilRequestEnds(req, reply, payload));

  registerApiRoutes(app, sb, { ...cardRoutes, ...walletRoutes, ...kycRoutes, ...payoutRoutes, ...esimRoutes });
  registerUploadRoutes(app, sb);
  registerControlRoutes(app, sb);

  app.setNotFoundHandler((req, reply) => {
    const matches = endpointsForPath(req.url);
    if (isControlPath(req.url)) return send(reply, 404, { error: 'NOT_FOUND' });
    if (req.url.startsWith(API_BASE_PATH)) {
      rateHeadersForUnrouted(sb, reply, req.method, req.url);
      if (matches.length > 0) {
        req.endpointKey = matches[0].key;
        reply.header('Allow', [...new Set(matches.map((m) => m.method))].join(', '));
        return sendApiError(reply, new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not supported here`));
      }
    }
    return sendApiError(reply, new ApiError('NOT_FOUND', 'no such endpoint'));
  });

  app.setErrorHandler((err: FastifyError, req, reply) => answerFrameworkError(sb, err, req, reply));
  return app;
}

function sendApiError(reply: FastifyReply, err: ApiError): FastifyReply {
  return send(reply, err.status, err.body);
}

function isControlPath(url: string): boolean {
  return url === '/sandbox' || url.startsWith('/sandbox/');
}

/** Errors raised before a handler runs (body too large, bad length, …) in the envelope. */
function answerFrameworkError(sb: Sandbox, err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
  const code =
    status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status === 400 ? 'VALIDATION_FAILED' : status === 500 ? 'INTERNAL_ERROR' : 'VALIDATION_FAILED';
  if (isControlPath(req.url)) return send(reply, status, { error: code });
  if (req.url.startsWith(API_BASE_PATH)) {
    req.endpointKey = endpointsForPath(req.url).find((e) => e.method === req.method)?.key;
    rateHeadersForUnrouted(sb, reply, req.method, req.url);
  }
  const errors = status === 400 ? { body: 'could not be read' } : undefined;
  return send(reply, status, errorBody(status, code, errors));
}
