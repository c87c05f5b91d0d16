/** Webhooks signed as the provider signs them (CONTRACTS §4), for the bridge's tests. */
import { WEBHOOK_PATH } from '../../src/bridge/app';
import { HmacSha256Scheme } from '../../src/provider/signing';

export interface WebhookSigner {
  apiKey: string;
  webhookSecret: string;
}

export interface SignOptions {
  /** The path the signature covers (the bridge's webhook path unless said). */
  path?: string;
  /** The signer's clock: a stale or future timestamp. */
  now?: () => number;
  /** Leave out X-API-Key (the spec does not say webhooks carry it). */
  withoutApiKey?: boolean;
}

/** The headers of one delivery of these exact bytes: X-API-Key, X-Timestamp, X-Nonce, X-Signature and the content type. */
export function signWebhook(body: string | Buffer, signer: WebhookSigner, opts: SignOptions = {}): Record<string, string> {
  const scheme = new HmacSha256Scheme({ apiKey: signer.apiKey, secret: signer.webhookSecret, now: opts.now });
  const { 'x-api-key': apiKey, ...signature } = scheme.sign({ method: 'POST', pathWithQuery: opts.path ?? WEBHOOK_PATH, body });
  return { ...signature, ...(opts.withoutApiKey ? {} : { 'x-api-key': apiKey }), 'content-type': 'application/json' };
}
