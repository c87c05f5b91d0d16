/**
 * An oversized body gets the 413 in the envelope, over real HTTP, and then the connection
 * closes cleanly, whatever the client: one that reads only after writing its whole body
 * (as python's http.client or a plain socket client do), node:http (reads while writing,
 * sends a FIN once told `Connection: close`), and undici's request (the provider client's
 * upload PUT). Before the lingering close the sandbox closed the socket with the rest of the
 * body unread, the kernel answered the client's next segment with a reset, and the first
 * kind of client saw EPIPE/ECONNRESET instead of the 413 (node:http saw the 413, then EPIPE).
 * Both a Content-Length above the limit and a chunked body growing past it, on the API
 * (1 MB) and on the presigned upload PUT (10 MB). Each case runs several times: a reset is
 * a race.
 */
import Fastify, { type FastifyError } from 'fastify';
import { request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request as undiciRequest } from 'undici';
import { API_BODY_LIMIT } from '../../src/sandbox/app';
import { MAX_UPLOAD_BYTES } from '../../src/sandbox/domain/kyc';
import { drainCap, lingerUntilRequestEnds } from '../../src/sandbox/lingering-close';
import { API_KEY, API_SECRET, BASE, Harness } from './helpers/harness';
import { signHeaders } from './helpers/signer';

const h = new Harness();
beforeAll(() => h.start());
afterAll(() => h.stop());
beforeEach(() => h.reset());

const REPEAT = 5;
const TOO_LARGE = { code: 413, message: 'PAYLOAD_TOO_LARGE' };
const CHUNK = 64 * 1024;

interface Target {
  method: string;
  url: string;
  headers: Record<string, string>;
}

interface Outcome {
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
  /** A socket error (EPIPE, ECONNRESET, …) anywhere in the exchange. */
  error?: string;
  /** Body bytes the client managed to hand to its socket. */
  written: number;
}

function chunksOf(total: number): Buffer[] {
  const out: Buffer[] = [];
  const block = Buffer.alloc(CHUNK, 0x61);
  for (let sent = 0; sent < total; sent += CHUNK) out.push(block.subarray(0, Math.min(CHUNK, total - sent)));
  return out;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no outcome after ${ms} ms`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A plain HTTP/1.1 client over a socket that writes the whole request first and only then
 * reads the answer, as python's http.client does. It sees the 413 only if the server has not
 * reset the connection while the body was still coming.
 */
function writeThenRead(t: Target, total: number, chunked: boolean): Promise<Outcome> {
  const url = new URL(t.url);
  return withTimeout(
    new Promise<Outcome>((resolve) => {
      const outcome: Outcome = { headers: {}, written: 0 };
      const received: Buffer[] = [];
      let reading = false;
      let settled = false;
      const done = () => {
        if (settled) return;
        settled = true;
        if (received.length > 0) Object.assign(outcome, parseResponse(Buffer.concat(received)));
        socket.destroy();
        resolve(outcome);
      };
      const socket = connect({ host: url.hostname, port: Number(url.port) });
      socket.pause();
      socket.on('error', (err: NodeJS.ErrnoException) => {
        outcome.error = err.code ?? err.message;
        received.length = 0; // a client that fails its write never gets to read
        done();
      });
      socket.on('end', done);
      socket.on('close', done);
      socket.on('data', (b: Buffer) => {
        if (reading) received.push(b);
      });
      const head = [`${t.method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`, ...Object.entries(t.headers).map(([k, v]) => `${k}: ${v}`)];
      head.push(chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${total}`);
      const parts: Buffer[] = [Buffer.from(head.join('\r\n') + '\r\n\r\n')];
      for (const c of chunksOf(total)) parts.push(chunked ? Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]) : c);
      if (chunked) parts.push(Buffer.from('0\r\n\r\n'));
      socket.once('connect', () => {
        let i = 0;
        const next = () => {
          while (i < parts.length && !settled) {
            const part = parts[i++];
            const bodyBytes = i === 1 ? 0 : part.length;
            const last = i === parts.length;
            const flushed = socket.write(part, (err) => {
              if (err) return;
              outcome.written += bodyBytes;
              if (last) {
                // Everything sent: now read the answer.
                reading = true;
                socket.resume();
              }
            });
            if (!flushed) return void socket.once('drain', next);
          }
        };
        next();
      });
    }),
    30_000,
    'write-then-read client',
  );
}

function parseResponse(raw: Buffer): Pick<Outcome, 'status' | 'headers' | 'body'> {
  const split = raw.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = raw.subarray(0, split).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const body = raw.subarray(split + 4).toString('utf8');
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}

/** node:http, streaming the body with backpressure; any socket error is reported, even one after the answer. */
function nodeHttp(t: Target, total: number, chunked: boolean): Promise<Outcome> {
  const url = new URL(t.url);
  return withTimeout(
    new Promise<Outcome>((resolve) => {
      const outcome: Outcome = { headers: {}, written: 0 };
      const headers: Record<string, string> = { ...t.headers };
      if (!chunked) headers['content-length'] = String(total);
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: t.method, headers, agent: false });
      req.on('response', (res) => {
        outcome.status = res.statusCode;
        outcome.headers = res.headers as Record<string, string>;
        const body: Buffer[] = [];
        res.on('data', (b: Buffer) => body.push(b));
        res.on('end', () => {
          const text = Buffer.concat(body).toString('utf8');
          outcome.body = text ? JSON.parse(text) : undefined;
        });
        res.on('error', (err: NodeJS.ErrnoException) => (outcome.error ??= err.code ?? err.message));
      });
      req.on('error', (err: NodeJS.ErrnoException) => (outcome.error ??= err.code ?? err.message));
      // Let a late error (EPIPE after the answer) surface before judging.
      req.on('close', () => setTimeout(() => resolve(outcome), 50));
      const parts = chunksOf(total);
      let i = 0;
      const pump = () => {
        while (i < parts.length) {
          const part = parts[i++];
          outcome.written += part.length;
          if (!req.write(part)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    }),
    30_000,
    'node:http client',
  );
}

/** undici's request, as src/provider/uploads.ts sends the upload PUT. */
async function undici(t: Target, total: number, chunked: boolean): Promise<Outcome> {
  const parts = chunksOf(total);
  // A stream of unknown length goes out chunked.
  const body = chunked ? Readable.from(parts) : Buffer.concat(parts);
  try {
    const res = await undiciRequest(t.url, { method: t.method, headers: t.headers, body, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers as Record<string, string>, body: text ? JSON.parse(text) : undefined, written: total };
  } catch (err: any) {
    return { headers: {}, error: String(err?.code ?? err?.cause?.code ?? err?.message), written: 0 };
  }
}

const CLIENTS = { 'write-then-read': writeThenRead, 'node:http': nodeHttp, undici } as const;

function apiTarget(total: number): Target {
  // Signed as a real caller would; the 413 comes before the signature is checked.
  const path = `${BASE}/kyc/presignedUploads`;
  const headers = { 'content-type': 'application/json', ...signHeaders('POST', path, Buffer.alloc(total, 0x61), { apiKey: API_KEY, secret: API_SECRET }) };
  return { method: 'POST', url: h.url + path, headers };
}

async function uploadTarget(): Promise<Target> {
  const pre = await h.api('POST', '/kyc/presignedUploads', { body: { fileName: 'big.jpg', contentType: 'image/jpeg', type: 'SELFIE_PROOF' } });
  expect(pre.status).toBe(200);
  return { method: 'PUT', url: pre.body.data.uploadUrl, headers: { 'content-type': 'image/jpeg' } };
}

function expect413(o: Outcome, label: string): void {
  expect({ label, status: o.status, body: o.body, error: o.error }).toEqual({ label, status: 413, body: TOO_LARGE, error: undefined });
  // An early answer says the connection ends with it.
  expect(o.headers.connection).toBe('close');
}

// Well over the limit means more than the socket buffers hold (a few MB on loopback): the
// bytes that would still be unread when the server answers, if it did not read them.
const MB = 1024 * 1024;
const SIZES = {
  api: { 'one byte over the limit': API_BODY_LIMIT + 1, '12 MB over the limit': API_BODY_LIMIT + 12 * MB },
  upload: { 'one byte over the limit': MAX_UPLOAD_BYTES + 1, '12 MB over the limit': MAX_UPLOAD_BYTES + 12 * MB },
};

describe.each(Object.entries(CLIENTS))('an oversized body sent by a %s client', (clientName, client) => {
  describe.each([
    ['Content-Length above the limit', false],
    ['chunked body growing past the limit', true],
  ] as const)('%s', (_mode, chunked) => {
    it.each(Object.entries(SIZES.api))(`API POST (1 MB limit), %s: 413 in the envelope, then the connection closes (${REPEAT} times)`, async (sizeName, size) => {
      for (let i = 0; i < REPEAT; i++) expect413(await client(apiTarget(size), size, chunked), `${clientName} ${sizeName} #${i}`);
      // Nothing was consumed by the refusals: the API still answers.
      expect((await h.api('GET', '/wallet/balance')).status).toBe(200);
    });

    it.each(Object.entries(SIZES.upload))(`presigned upload PUT (10 MB limit), %s: 413 in the envelope, then the connection closes (${REPEAT} times)`, async (sizeName, size) => {
      const target = await uploadTarget();
      for (let i = 0; i < REPEAT; i++) expect413(await client(target, size, chunked), `${clientName} ${sizeName} #${i}`);
      // The refused PUTs did not use the URL up.
      const ok = await fetch(target.url, { method: 'PUT', headers: target.headers, body: Buffer.from('jpeg') });
      expect(ok.status).toBe(200);
    });
  });
});

describe('the draining is bounded', () => {
  it(`a client that keeps sending past ${drainCap(API_BODY_LIMIT) / MB} MB more is cut off, and the sandbox carries on`, async () => {
    const declared = 256 * MB;
    const started = Date.now();
    const cut = await writeThenRead({ method: 'POST', url: `${h.url}${BASE}/kyc/presignedUploads`, headers: { 'content-type': 'application/json' } }, declared, false);
    expect(cut.error).toMatch(/^(EPIPE|ECONNRESET)$/);
    // The server stopped reading long before the declared length (socket buffers allow some slack).
    expect(cut.written).toBeLessThan(API_BODY_LIMIT + drainCap(API_BODY_LIMIT) + 32 * MB);
    expect(Date.now() - started).toBeLessThan(10_000);
    // A client that reads while writing still got the 413 before the cut.
    const early = await nodeHttp({ method: 'POST', url: `${h.url}${BASE}/kyc/presignedUploads`, headers: { 'content-type': 'application/json' } }, 64 * MB, false);
    expect(early.status).toBe(413);
    expect(early.body).toEqual(TOO_LARGE);
    expect((await h.api('GET', '/wallet/balance')).status).toBe(200);
  });
});

describe('the draining is bounded in time', () => {
  it('a client that stalls mid-body still has the 413, and is disconnected once the time bound passes', async () => {
    // The same onSend hook as the sandbox's, on a bare app, with a short time bound.
    const app = Fastify({ bodyLimit: 1024, forceCloseConnections: true });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    app.addHook('onSend', async (req, reply, payload) => lingerUntilRequestEnds(req, reply, payload, { timeoutMs: 300 }));
    app.post('/', (_req, reply) => reply.send('unreached'));
    app.setErrorHandler((err: FastifyError, _req, reply) => reply.code(err.statusCode ?? 500).type('application/json').send(JSON.stringify(TOO_LARGE)));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      const socket = connect({ host: '127.0.0.1', port });
      const received: Buffer[] = [];
      socket.on('data', (b: Buffer) => received.push(b));
      socket.on('error', () => undefined);
      const started = Date.now();
      const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
      // Declares 1 MB, sends 64 KB, then nothing more.
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${1024 * 1024}\r\n\r\n`);
      socket.write(Buffer.alloc(64 * 1024));
      const after = await withTimeout(closed, 5_000, 'stalled client');
      expect(after).toBeGreaterThanOrEqual(250);
      const answer = parseResponse(Buffer.concat(received));
      expect(answer.status).toBe(413);
      expect(answer.body).toEqual(TOO_LARGE);
      expect(answer.headers.connection).toBe('close');
    } finally {
      await app.close();
    }
  });
});
