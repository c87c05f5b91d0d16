/**
 * For those who want it: ConnectOptions from our documented variables (README, "Configuration").
 * Kept apart from the library, which reads no environment. It throws (never exits) a
 * CardIssuingError ValidationFailed naming each variable and its rule.
 */
import type { CodecKeys } from '../codec/payload-codec';
import { connectOptionsErrors, tlsFromFiles, type ConnectOptions } from './connect';
import { CardIssuingError } from './errors';

const FIELD_VARIABLE: Record<string, string> = {
  address: 'TEMPORAL_ADDRESS',
  namespace: 'TEMPORAL_NAMESPACE',
  taskQueue: 'TEMPORAL_TASK_QUEUE',
  'codec.keyId': 'PAYLOAD_CODEC_KEY_ID',
  'codec.key': 'PAYLOAD_CODEC_KEY',
};

/**
 * TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE (default), TEMPORAL_TASK_QUEUE
 * (card-issuing), TEMPORAL_TLS, TEMPORAL_TLS_CERT_PATH / _KEY_PATH, TEMPORAL_API_KEY,
 * PAYLOAD_CODEC_KEY and PAYLOAD_CODEC_KEY_ID (dev), PAYLOAD_CODEC_PREVIOUS_KEYS (`id:base64,…`).
 * Unlike the worker, no development key is assumed: PAYLOAD_CODEC_KEY is required.
 */
export function optionsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ConnectOptions {
  const previousKeys = parsePreviousKeys(env.PAYLOAD_CODEC_PREVIOUS_KEYS);
  const codec: CodecKeys = { keyId: env.PAYLOAD_CODEC_KEY_ID ?? 'dev', key: env.PAYLOAD_CODEC_KEY ?? '', ...(previousKeys ? { previousKeys } : {}) };
  const certs = { certPath: env.TEMPORAL_TLS_CERT_PATH, keyPath: env.TEMPORAL_TLS_KEY_PATH };
  const opts: ConnectOptions = {
    address: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    namespace: env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE ?? 'card-issuing',
    codec,
    ...(certs.certPath ? { tls: tlsFromFiles(certs) } : env.TEMPORAL_TLS === 'true' ? { tls: true } : {}),
    ...(env.TEMPORAL_API_KEY ? { apiKey: env.TEMPORAL_API_KEY } : {}),
  };
  const errors = connectOptionsErrors(opts);
  if (previousKeys === null) errors.previousKeys = 'must be id:base64 pairs separated by commas';
  if (Object.keys(errors).length > 0) {
    const named = Object.fromEntries(Object.entries(errors).map(([field, rule]) => [FIELD_VARIABLE[field] ?? (field.startsWith('codec.previousKeys') || field === 'previousKeys' ? 'PAYLOAD_CODEC_PREVIOUS_KEYS' : field), rule]));
    throw new CardIssuingError({ type: 'ValidationFailed', message: `invalid environment: ${Object.entries(named).map(([v, rule]) => `${v} ${rule}`).join('; ')}`, details: [{ errors: named }] });
  }
  return opts;
}

/** `id:base64,id:base64` → { id: base64 }; undefined when unset, null when malformed. */
function parsePreviousKeys(text: string | undefined): Record<string, string> | undefined | null {
  if (!text) return undefined;
  const pairs = text.split(',').map((p) => p.trim().split(':'));
  if (pairs.some((p) => p.length !== 2 || !p[0] || !p[1])) return null;
  return Object.fromEntries(pairs);
}
