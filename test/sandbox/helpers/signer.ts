/**
 * An independent signer for the tests: CONTRACTS §3 written again with plain node:crypto,
 * deliberately not importing src/provider/signing.ts, so the two cannot share a bug.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function hmacSignature(secret: string, timestamp: string, method: string, pathWithQuery: string, nonce: string, body: string | Buffer): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${timestamp}.${method.toUpperCase()}.${pathWithQuery}.${nonce}`);
  if (body.length > 0) {
    mac.update('.');
    mac.update(body);
  }
  return mac.digest('base64');
}

export interface SignOptions {
  apiKey: string;
  secret: string;
  timestamp?: number;
  nonce?: string;
}

export function signHeaders(method: string, pathWithQuery: string, body: string | Buffer, o: SignOptions): Record<string, string> {
  const timestamp = String(o.timestamp ?? Date.now());
  const nonce = o.nonce ?? randomBytes(16).toString('hex');
  return {
    'x-api-key': o.apiKey,
    'x-timestamp': timestamp,
    'x-nonce': nonce,
    'x-signature': hmacSignature(o.secret, timestamp, method, pathWithQuery, nonce, body),
  };
}

/** Checks a webhook delivery as a receiver would: same algorithm, constant-time compare, 5-minute tolerance. */
export function verifyWebhook(secret: string, pathWithQuery: string, headers: Record<string, string | string[] | undefined>, body: Buffer): boolean {
  const ts = String(headers['x-timestamp'] ?? '');
  const nonce = String(headers['x-nonce'] ?? '');
  const given = Buffer.from(String(headers['x-signature'] ?? ''));
  if (!ts || !nonce || Math.abs(Date.now() - Number(ts)) > 5 * 60 * 1000) return false;
  const expected = Buffer.from(hmacSignature(secret, ts, 'POST', pathWithQuery, nonce, body));
  return expected.length === given.length && timingSafeEqual(expected, given);
}
