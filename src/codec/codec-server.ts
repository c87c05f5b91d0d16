/**
 * The codec endpoint for the Temporal UI and CLI, so people can read encrypted history without
 * the key leaving our process (`temporal server start-dev --ui-codec-endpoint http://127.0.0.1:4030`,
 * `temporal workflow show --codec-endpoint …`).
 *
 * Protocol: POST /encode and POST /decode take `{ payloads: [{ metadata: { k: base64 }, data: base64 }] }`
 * and answer the same shape. The UI calls from the browser, hence CORS for its origins only.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { createCodecAuthorizer, type CodecAuthorizer } from './codec-auth';

/** Where the Temporal dev server serves its UI. */
export const DEFAULT_ALLOWED_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'];

// Payloads can be large (history pages, big inputs); the default 1 MiB would reject real UI requests.
const BODY_LIMIT_BYTES = 16 * 1024 * 1024;

const jsonPayload = z.object({
  metadata: z.record(z.string(), z.base64()).nullish(),
  data: z.base64().nullish(),
});
const body = z.object({ payloads: z.array(jsonPayload) });
type JsonPayload = z.infer<typeof jsonPayload>;

export interface CodecServerOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** Defaults to 127.0.0.1: decrypted data must not be reachable from other machines. */
  host?: string;
  codec: PayloadCodec;
  allowedOrigins?: readonly string[];
  /** Who may call (codec-auth.ts); default: loopback callers only. */
  auth?: CodecAuthorizer;
  logger?: FastifyServerOptions['logger'];
}

export interface CodecServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Builds the app without listening, for `app.inject` tests. */
export function buildCodecApp(options: Omit<CodecServerOptions, 'port' | 'host'>): FastifyInstance {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: BODY_LIMIT_BYTES });
  const allowed = new Set(options.allowedOrigins ?? DEFAULT_ALLOWED_ORIGINS);
  const auth = options.auth ?? createCodecAuthorizer({ mode: 'loopback' });

  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin && allowed.has(origin)) {
      reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    }
  });

  app.options('/*', async (request, reply) => {
    const origin = request.headers.origin;
    if (!origin || !allowed.has(origin)) return reply.code(403).send({ error: 'origin not allowed' });
    return reply
      .code(204)
      .header('access-control-allow-methods', 'POST, OPTIONS')
      .header('access-control-allow-headers', 'authorization, content-type, x-namespace')
      .header('access-control-max-age', '600')
      .send();
  });

  // Authentication first, before the body is read or parsed (a stranger's 16 MiB costs us nothing);
  // then a browser's Origin, when it sends one, must be one of ours too.
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS' || request.url === '/health') return;
    const verdict = await auth.authorize({ remoteAddress: request.socket.remoteAddress, authorization: request.headers.authorization });
    if (!verdict.ok) return reply.code(verdict.status).send({ error: verdict.reason });
    const origin = request.headers.origin;
    if (origin !== undefined && !allowed.has(origin)) return reply.code(403).send({ error: 'origin not allowed' });
  });

  app.get('/health', async () => ({ ok: true }));

  for (const op of ['encode', 'decode'] as const) {
    app.post(`/${op}`, async (request, reply) => {
      const parsed = body.safeParse(request.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return reply.code(400).send({ error: `invalid body: ${issue.path.join('.') || '(root)'} ${issue.message}` });
      }
      const payloads = await options.codec[op](parsed.data.payloads.map(fromJson));
      return { payloads: payloads.map(toJson) };
    });
  }

  app.setErrorHandler(async (error: { statusCode?: number; type?: string; message: string }, request, reply) => {
    // Codec errors name the payload's key id and why it failed: useful to the caller, never secret.
    if (error.type === 'PayloadCodecError') return reply.code(400).send({ error: error.message });
    // Fastify's own 4xx (bad JSON, wrong content type, too large) already say what is wrong.
    if (error.statusCode && error.statusCode < 500) return reply.code(error.statusCode).send({ error: error.message });
    request.log.error({ err: error }, 'codec request failed');
    return reply.code(500).send({ error: 'internal error' });
  });

  return app;
}

/** Starts listening; `close()` stops accepting and waits for requests in flight. */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const { port, host = '127.0.0.1', ...rest } = options;
  const app = buildCodecApp(rest);
  await app.listen({ port, host });
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return { url: `http://${host}:${actualPort}`, port: actualPort, close: () => app.close() };
}

function fromJson({ metadata, data }: JsonPayload): Payload {
  return {
    metadata: metadata ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])) : undefined,
    data: data ? Buffer.from(data, 'base64') : undefined,
  };
}

function toJson({ metadata, data }: Payload): JsonPayload {
  return {
    metadata: metadata ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) : undefined,
    data: data ? Buffer.from(data).toString('base64') : undefined,
  };
}
