/**
 * Lingering close (RFC 9112 §9.6) for answers given before the request body has fully
 * arrived: chiefly the 413 of an oversized body, which fastify raises as soon as the
 * Content-Length, or the bytes streamed so far, pass the limit. Closing the socket at that
 * point, with the rest of the body unread, makes the kernel answer with a reset, and a
 * client still writing its body then sees EPIPE/ECONNRESET instead of the 413.
 *
 * So the answer is written at once, in full (Content-Length, `Connection: close`), but the
 * response is only ended once the rest of the request body has been read and discarded;
 * node then closes a connection with nothing unread, and the client reads the 413 whether
 * it reads while writing or only after. The draining is bounded: past drainCap() bytes
 * (DRAIN_LIMIT_FACTOR times the route's body limit, at least DRAIN_MIN_BYTES, since socket
 * buffers alone hold a few MB), or after DRAIN_TIMEOUT_MS, the socket is destroyed.
 */
import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Bytes read and discarded after the early answer, at most this many times the route's body limit… */
export const DRAIN_LIMIT_FACTOR = 4;
/** …but at least this many. */
export const DRAIN_MIN_BYTES = 16 * 1024 * 1024;
/** Time spent draining after the early answer, at most. */
export const DRAIN_TIMEOUT_MS = 10_000;

/** How many bytes past the early answer are read and discarded for a route with this body limit. */
export function drainCap(bodyLimit: number): number {
  return Math.max(DRAIN_LIMIT_FACTOR * bodyLimit, DRAIN_MIN_BYTES);
}

export interface DrainBounds {
  maxBytes: number;
  timeoutMs: number;
}

/**
 * onSend: the payload unchanged when the request has fully arrived; otherwise a stream that
 * carries the same bytes at once and ends when the request does (or a bound is hit).
 */
export function lingerUntilRequestEnds(req: FastifyRequest, reply: FastifyReply, payload: unknown, bounds?: Partial<DrainBounds>): unknown {
  const raw = req.raw;
  if (raw.complete || raw.destroyed || raw.readableEnded) return payload;
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;

  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const maxBytes = bounds?.maxBytes ?? drainCap(req.routeOptions.bodyLimit);
  const timeoutMs = bounds?.timeoutMs ?? DRAIN_TIMEOUT_MS;
  reply.header('connection', 'close').header('content-length', String(bytes.length));

  const out = new PassThrough();
  out.write(bytes);
  let drained = 0;
  let settled = false;
  const settle = (cut: boolean) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    out.end();
    // The client sends more than we are willing to read: stop reading; it may see a reset.
    if (cut) raw.socket?.destroy();
  };
  const timer = setTimeout(() => settle(true), timeoutMs);
  timer.unref();
  raw.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxBytes) settle(true);
  });
  raw.once('end', () => settle(false));
  raw.once('close', () => settle(false));
  raw.once('error', () => settle(false));
  raw.resume();
  return out;
}
