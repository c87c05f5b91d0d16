/**
 * For those who want it: ConnectOptions from our documented variables (docs/configuration.md).
 * Kept apart from the library, which reads no environment. It throws (never exits) a
 * CardIssuingError ValidationFailed naming each variable and its rule.
 */
import { publicKeyOf } from '../codec/card-secrets';
import { parseKeyList } from '../codec/keyring';
import type { CodecKeys } from '../codec/payload-codec';
import { connectOptionsErrors, tlsFromFiles, type ConnectOptions } from './connect';
import { CardIssuingError } from './errors';
import { DEVELOPMENT_PIN_PRIVATE_KEY } from '../shared/development-keys';

const FIELD_VARIABLE: Record<string, string> = {
  address: 'TEMPORAL_ADDRESS',
  namespace: 'TEMPORAL_NAMESPACE',
  taskQueue: 'TEMPORAL_TASK_QUEUE',
  'codec.keyId': 'PAYLOAD_CODEC_KEY_ID',
  'codec.key': 'PAYLOAD_CODEC_KEY',
  'codec.previousKeys': 'PAYLOAD_CODEC_PREVIOUS_KEYS',
  'pinKey.keyId': 'PIN_SEAL_KEY_ID',
  'pinKey.publicKey': 'PIN_SEAL_PUBLIC_KEY',
  'cardActionKey.keyId': 'CARD_ACTION_KEY_ID',
  'cardActionKey.privateKey': 'CARD_ACTION_SIGNING_KEY',
  'cardActionKey.subject': 'CARD_ACTION_SUBJECT',
};

type Env = Readonly<Record<string, string | undefined>>;

/**
 * TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE (default), TEMPORAL_TASK_QUEUE
 * (card-issuing), TEMPORAL_TLS, TEMPORAL_TLS_CERT_PATH / _KEY_PATH, TEMPORAL_TLS_CA_PATH,
 * TEMPORAL_TLS_SERVER_NAME, TEMPORAL_API_KEY, PAYLOAD_CODEC_KEY and PAYLOAD_CODEC_KEY_ID (dev),
 * PAYLOAD_CODEC_PREVIOUS_KEYS (`id:base64,…`), and to send PINs PIN_SEAL_PUBLIC_KEY and
 * PIN_SEAL_KEY_ID (dev): the workers' public key, no secret; to act on a card CARD_ACTION_SIGNING_KEY,
 * CARD_ACTION_KEY_ID (dev) and CARD_ACTION_SUBJECT. Unlike the worker, no development key is
 * assumed: PAYLOAD_CODEC_KEY is required, without PIN_SEAL_PUBLIC_KEY no PIN is sent, and without
 * CARD_ACTION_SIGNING_KEY no card action.
 */
export function optionsFromEnv(env: Env = process.env): ConnectOptions {
  const errors: Record<string, string> = {};
  const codec = keyring(env, 'PAYLOAD_CODEC', errors);
  const pinKey = env.PIN_SEAL_PUBLIC_KEY ? { keyId: env.PIN_SEAL_KEY_ID ?? 'dev', publicKey: env.PIN_SEAL_PUBLIC_KEY } : undefined;
  if (pinKey?.publicKey === developmentPinPublicKey() && !isDevelopment(env)) errors.PIN_SEAL_PUBLIC_KEY = DEVELOPMENT_PIN_KEY_RULE;
  const cardActionKey = env.CARD_ACTION_SIGNING_KEY
    ? { keyId: env.CARD_ACTION_KEY_ID ?? 'dev', privateKey: env.CARD_ACTION_SIGNING_KEY, ...(env.CARD_ACTION_SUBJECT ? { subject: env.CARD_ACTION_SUBJECT } : {}) }
    : undefined;
  const files = { certPath: env.TEMPORAL_TLS_CERT_PATH, keyPath: env.TEMPORAL_TLS_KEY_PATH, caPath: env.TEMPORAL_TLS_CA_PATH, serverName: env.TEMPORAL_TLS_SERVER_NAME };
  const certificates = files.certPath || files.caPath || files.serverName;
  const opts: ConnectOptions = {
    address: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    namespace: env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE ?? 'card-issuing',
    codec,
    ...(pinKey ? { pinKey } : {}),
    ...(cardActionKey ? { cardActionKey } : {}),
    ...(certificates ? { tls: tlsFromFiles(files) } : env.TEMPORAL_TLS === 'true' ? { tls: true } : {}),
    ...(env.TEMPORAL_API_KEY ? { apiKey: env.TEMPORAL_API_KEY } : {}),
  };
  for (const [field, rule] of Object.entries(connectOptionsErrors(opts))) errors[variableOf(field)] ??= rule;
  if (Object.keys(errors).length > 0) {
    throw new CardIssuingError({ type: 'ValidationFailed', message: `invalid environment: ${Object.entries(errors).map(([v, rule]) => `${v} ${rule}`).join('; ')}`, details: [{ errors }] });
  }
  return opts;
}

/** Its private half is public (shared/development-keys.ts): whoever reads history could open a PIN sealed to it. */
const DEVELOPMENT_PIN_KEY_RULE =
  "is the public development key, whose private half anyone has: set the workers' own PIN_SEAL_PUBLIC_KEY (or CARD_ISSUING_DEVELOPMENT=true, on a developer's machine only)";

function developmentPinPublicKey(): string {
  return publicKeyOf(DEVELOPMENT_PIN_PRIVATE_KEY);
}

/** CARD_ISSUING_DEVELOPMENT as the processes read it (src/config.ts): true or 1. */
function isDevelopment(env: Env): boolean {
  return env.CARD_ISSUING_DEVELOPMENT === 'true' || env.CARD_ISSUING_DEVELOPMENT === '1';
}

/** One keyring from `<prefix>_KEY_ID`, `_KEY` and `_PREVIOUS_KEYS`; a malformed list is an error under its variable. */
function keyring(env: Env, prefix: string, errors: Record<string, string>): CodecKeys {
  let previousKeys: Record<string, string> | undefined;
  try {
    previousKeys = parseKeyList(env[`${prefix}_PREVIOUS_KEYS`]);
  } catch (err) {
    errors[`${prefix}_PREVIOUS_KEYS`] = (err as Error).message;
  }
  return { keyId: env[`${prefix}_KEY_ID`] ?? 'dev', key: env[`${prefix}_KEY`] ?? '', ...(previousKeys ? { previousKeys } : {}) };
}

function variableOf(field: string): string {
  return FIELD_VARIABLE[field] ?? FIELD_VARIABLE[field.split('.').slice(0, 2).join('.')] ?? field;
}
