// POST /cards/:id/fund: the caller's Idempotency-Key decides the funding (a retry of the request
// joins the first and answers its outcome; the key with another amount is refused 409), and every
// failure of the client is a CardIssuingError whose `type` picks the answer below.
import { isCardIssuingError, isFailureOf } from '@card-issuing/client';

const FUND_PATH = /^\/cards\/([^/]+)\/fund$/;
const MAX_BODY_BYTES = 16 * 1024;

/**
 * A fundCard failure's `type` → HTTP status. Money did not move for a 4xx; for OutcomeUnknown and
 * the waits cut short (ClientTimeout, Aborted) it may have: the caller repeats the request with the
 * same Idempotency-Key, which joins the first funding and never moves the money twice.
 */
const STATUS_OF = {
  ValidationFailed: 422,
  NotFound: 404,
  InvalidState: 422,
  InsufficientFunds: 422,
  OperationFailed: 422,
  IdempotencyConflict: 409,
  IdempotencyKeyTerminal: 409,
  IdempotencyInProgress: 409,
  OutcomeUnknown: 202,
  ClientTimeout: 503,
  Aborted: 503,
  FlowCancelled: 503,
  FlowTerminated: 503,
  FlowTimedOut: 503,
};

/** The request handler, given a connected CardIssuingClient. */
export function createApp({ client, callTimeoutMs = 30_000 }) {
  return (req, res) => {
    handle(client, callTimeoutMs, req, res).catch((err) => {
      console.error(err);
      if (!res.headersSent) send(res, 500, { error: 'Internal' });
      else res.destroy();
    });
  };
}

async function handle(client, callTimeoutMs, req, res) {
  const cardId = FUND_PATH.exec(new URL(req.url, 'http://service').pathname)?.[1];
  if (!cardId) return send(res, 404, { error: 'NotFound', message: 'POST /cards/:id/fund is the only route' });
  if (req.method !== 'POST') return send(res, 405, { error: 'MethodNotAllowed', message: 'use POST' }, { allow: 'POST' });

  const idempotencyKey = req.headers['idempotency-key'];
  if (!idempotencyKey) return send(res, 400, { error: 'ValidationFailed', message: 'the Idempotency-Key header is required: repeat it on every retry of this request', fieldErrors: { 'Idempotency-Key': 'is required' } });
  const body = await readJson(req);
  if (body === undefined) return send(res, 400, { error: 'ValidationFailed', message: 'the body must be a JSON object such as {"amount": 1500}' });

  // The wait ends when the caller hangs up (the funding goes on: a retry under the key joins it).
  const hangUp = new AbortController();
  res.once('close', () => hangUp.abort());
  try {
    const result = await client.fundCard({ cardId: decodeURIComponent(cardId), amount: body.amount, idempotencyKey }, { timeout: callTimeoutMs, signal: hangUp.signal });
    return send(res, 200, result);
  } catch (err) {
    if (isFailureOf(err, 'fundCard')) return sendFailure(res, err);
    if (isCardIssuingError(err)) return send(res, 502, { error: err.type, mayHaveTakenEffect: err.mayHaveTakenEffect, idempotencyKey });
    throw err;
  }
}

function sendFailure(res, err) {
  const status = STATUS_OF[err.type] ?? 502;
  const answer = { error: err.type, mayHaveTakenEffect: err.mayHaveTakenEffect, idempotencyKey: err.idempotencyKey };
  // 4xx answers carry the flow's message and field errors; a 5xx never carries internal text.
  if (status < 500) Object.assign(answer, { message: err.message }, err.fieldErrors ? { fieldErrors: err.fieldErrors } : {});
  if (status === 202 || status === 503) answer.retry = 'repeat this request with the same Idempotency-Key: it joins the first funding';
  return send(res, status, answer, status === 503 ? { 'retry-after': '5' } : {});
}

/** The body as a JSON object; undefined when it is not one (or is too large). */
async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
