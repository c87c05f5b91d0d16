/**
 * The codec endpoint for the Temporal UI and CLI, so people can read encrypted history without
 * the key leaving our process (`temporal server start-dev --ui-codec-endpoint http://127.0.0.1:4030`,
 * `temporal workflow show --codec-endpoint …`).
 *
 * Protocol: POST /encode and POST /decode take `{ payloads: [{ metadata: { k: base64 }, data: base64 }] }`
 * and answer the same shape. The UI calls from the browser, hence CORS for its origins only.
 * /decode needs the decode role, /encode the encode role (codec-auth.ts), checked before the body is read;
 * every call of either, served or refused, leaves one audit line.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { silentLogger, type Logger } from '../logging';
import { createCodecAuthorizer, type AuthVerdict, type CodecAuthorizer, type CodecOperation } from './codec-auth';
import { ENCRYPTED_ENCODING, METADATA_KEY_ID } from './payload-codec';

/** Where the Temporal dev server serves its UI. */
export const DEFAULT_ALLOWED_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'];

// Payloads can be large (history pages, big inputs); the default 1 MiB would reject real UI requests.
const BODY_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * Slowloris and its kin: without limits a client that trickles its headers or body, or never reads
 * our answer, holds a socket (and a 16 MiB body buffer) for as long as it likes, and a few hundred
 * such sockets starve the UI's real calls. requestTimeout bounds the time to receive a whole request
 * (a 16 MiB body at ~5 Mbit/s; Node enforces it on its connection check, every 30 s, so a little
 * later at worst); connectionTimeout closes a socket idle that long at any point (a client that
 * stopped reading a large decoded answer); keepAliveTimeout closes idle kept-alive sockets, above
 * the 60 s idle timeout of the usual proxies in front so none reuses a socket we are closing.
 */
export const CODEC_TIMEOUTS = { requestTimeout: 30_000, connectionTimeout: 35_000, keepAliveTimeout: 72_000 } as const;

const OPERATIONS: Record<string, CodecOperation> = { '/decode': 'decode', '/encode': 'encode' };
/** An audit line names at most this many distinct key ids; a caller could otherwise send thousands. */
const MAX_LOGGED_KEY_IDS = 8;
const KEY_ID_SHAPE = /^[A-Za-z0-9_-]{1,32}$/;

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
  /** Who may call, and do what (codec-auth.ts); default: loopback callers only, decoding only. */
  auth?: CodecAuthorizer;
  /** The audit lines (one per /decode and /encode) and internal errors; default: none (tests). */
  logger?: Logger;
}

export interface CodecServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Builds the app without listening, for `app.inject` tests. */
export function buildCodecApp(options: Omit<CodecServerOptions, 'port' | 'host'>): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT_BYTES, ...CODEC_TIMEOUTS });
  const allowed = new Set(options.allowedOrigins ?? DEFAULT_ALLOWED_ORIGINS);
  const auth = options.auth ?? createCodecAuthorizer({ mode: 'loopback' });
  const log = options.logger ?? silentLogger;
  const audits = new WeakMap<FastifyRequest, Audit>();

  /**
   * PCI DSS 10.2: every access to cardholder data (a decode) and every action that could change it
   * (an encode, which can forge what our services trust) is logged with who, what, when, from where,
   * on what and with what outcome: one line per request, whatever its fate. Never the payloads'
   * contents, never the credential (the logger also redacts `authorization` and `token` by name).
   */
  const writeAudit = (request: FastifyRequest, fields: { status?: number; aborted?: boolean }) => {
    const audit = audits.get(request);
    if (!audit || audit.logged) return;
    audit.logged = true;
    const refused = !audit.verdict.ok || audit.refusal !== undefined;
    const line = {
      event: 'codec.access',
      operation: audit.operation,
      outcome: refused ? 'refused' : 'allowed',
      ...fields,
      caller: audit.verdict.caller,
      may: audit.verdict.may,
      ...(refused ? { reason: audit.verdict.ok ? audit.refusal : audit.verdict.reason } : {}),
      payloads: audit.payloads ?? null,
      keyIds: audit.keyIds ?? [],
      remoteAddress: request.socket.remoteAddress ?? null,
      ...(audit.namespace ? { namespace: audit.namespace } : {}),
    };
    if (refused) log.warn(`codec ${audit.operation} refused`, line);
    else log.info(`codec ${audit.operation}`, line);
  };
  app.addHook('onResponse', async (request, reply) => writeAudit(request, { status: reply.statusCode }));
  app.addHook('onRequestAbort', async (request) => writeAudit(request, { aborted: true }));

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

  // Authentication and the operation's role first, before the body is read or parsed (a stranger's
  // 16 MiB costs us nothing); then a browser's Origin, when it sends one, must be one of ours too.
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS' || request.url === '/health') return;
    const operation = request.method === 'POST' ? OPERATIONS[request.routeOptions.url ?? ''] : undefined;
    const verdict = await auth.authorize({ remoteAddress: request.socket.remoteAddress, authorization: request.headers.authorization, operation });
    const audit: Audit | undefined = operation ? { operation, verdict, namespace: namespaceOf(request.headers['x-namespace']), logged: false } : undefined;
    if (audit) audits.set(request, audit);
    if (!verdict.ok) return reply.code(verdict.status).send({ error: verdict.reason });
    const origin = request.headers.origin;
    if (origin !== undefined && !allowed.has(origin)) {
      if (audit) audit.refusal = 'origin not allowed';
      return reply.code(403).send({ error: 'origin not allowed' });
    }
  });

  app.get('/health', async () => ({ ok: true }));

  for (const op of ['encode', 'decode'] as const) {
    app.post(`/${op}`, async (request, reply) => {
      const parsed = body.safeParse(request.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return reply.code(400).send({ error: `invalid body: ${issue.path.join('.') || '(root)'} ${issue.message}` });
      }
      const audit = audits.get(request);
      if (audit) {
        audit.payloads = parsed.data.payloads.length;
        if (op === 'decode') audit.keyIds = keyIdsOf(parsed.data.payloads);
      }
      const payloads = (await options.codec[op](parsed.data.payloads.map(fromJson))).map(toJson);
      if (audit && op === 'encode') audit.keyIds = keyIdsOf(payloads);
      return { payloads };
    });
  }

  app.setErrorHandler(async (error: { statusCode?: number; type?: string; message: string }, request, reply) => {
    // Codec errors name the payload's key id and why it failed: useful to the caller, never secret.
    if (error.type === 'PayloadCodecError') return reply.code(400).send({ error: error.message });
    // Fastify's own 4xx (bad JSON, wrong content type, too large) already say what is wrong.
    if (error.statusCode && error.statusCode < 500) return reply.code(error.statusCode).send({ error: error.message });
    log.error('codec request failed', { err: error instanceof Error ? error.message : String(error), path: request.routeOptions.url });
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

/** What one /decode or /encode request's audit line says, gathered as the request goes. */
interface Audit {
  operation: CodecOperation;
  verdict: AuthVerdict;
  /** Refused after authorization (a foreign Origin). */
  refusal?: string;
  /** Counted once the body parsed; unknown (null) when refused, as the body is then never read. */
  payloads?: number;
  keyIds?: string[];
  namespace?: string;
  logged: boolean;
}

/** The ids of the keys that sealed these payloads (the encrypted side: a decode's input, an encode's output). */
function keyIdsOf(payloads: JsonPayload[]): string[] {
  const ids = new Set<string>();
  for (const { metadata } of payloads) {
    if (!metadata?.encoding || Buffer.from(metadata.encoding, 'base64').toString() !== ENCRYPTED_ENCODING) continue;
    const id = metadata[METADATA_KEY_ID] === undefined ? '' : Buffer.from(metadata[METADATA_KEY_ID], 'base64').toString();
    // The caller wrote these: an id not shaped like ours is logged as such, not as its bytes.
    ids.add(KEY_ID_SHAPE.test(id) ? id : '(malformed)');
    if (ids.size > MAX_LOGGED_KEY_IDS) break;
  }
  const list = [...ids];
  return list.length > MAX_LOGGED_KEY_IDS ? [...list.slice(0, MAX_LOGGED_KEY_IDS), '(more)'] : list;
}

/** The namespace the UI says it reads (`x-namespace`), when it is shaped like one. */
function namespaceOf(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && /^[A-Za-z0-9._-]{1,255}$/.test(header) ? header : undefined;
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
