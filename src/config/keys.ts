/**
 * The keys of the environment: keyrings (current key, retired ones by id), the PIN key pair, the card
 * action keys. Parsed once by loadConfig (./index.ts); each bad value is one ConfigError naming it.
 */
import { parseKeyList } from '../codec/keyring';
import { publicKeyOf } from '../codec/card-secrets';
import { cardActionPublicKeyOf } from '../codec/card-capability';
import type { CodecKeys } from '../codec/payload-codec';
import { DEVELOPMENT_PIN_PRIVATE_KEY } from '../shared/development-keys';
import { ConfigError } from './errors';
import type { CardActionConfig, Env, PinKeys } from './index';

/** The card action signing key of development (no CARD_ACTION_SIGNING_KEY): public, so no worker outside development trusts it. */
export const DEVELOPMENT_CARD_ACTION_KEY = Buffer.alloc(32, 19).toString('base64');

/** One keyring from its three variables (`<prefix>_KEY_ID`, `_KEY`, `_PREVIOUS_KEYS`); a retired key under the current id is refused. */
export function keyring(prefix: string, keyId: string, key: string, previous: string | undefined): CodecKeys {
  let previousKeys: Record<string, string> | undefined;
  try {
    previousKeys = parseKeyList(previous);
  } catch (err) {
    throw new ConfigError(`configuration: ${prefix}_PREVIOUS_KEYS ${(err as Error).message}`);
  }
  if (previousKeys && keyId in previousKeys) {
    throw new ConfigError(`configuration: ${prefix}_PREVIOUS_KEYS names "${keyId}", the current ${prefix}_KEY_ID: a retired key needs its own id`);
  }
  return { keyId, key, ...(previousKeys ? { previousKeys } : {}) };
}

/** The codec endpoint holds every payload key: a PIN key with the same bytes would be one it holds too. */
export function assertKeysApart(codec: CodecKeys, other: CodecKeys, what: string): void {
  const payloadKeys = new Set([codec.key, ...Object.values(codec.previousKeys ?? {})].map((k) => Buffer.from(k, 'base64').toString('hex')));
  const reused = [other.key, ...Object.values(other.previousKeys ?? {})].some((k) => payloadKeys.has(Buffer.from(k, 'base64').toString('hex')));
  if (reused) throw new ConfigError(`configuration: ${what} equals a payload codec key: the codec endpoint holds those, so PINs need a key pair of their own (docs/operations.md, "PIN keys")`);
}

/**
 * The PIN keys of the environment: the private key's public half unless PIN_SEAL_PUBLIC_KEY is given
 * (and then both must agree); neither set: the development pair.
 */
export function pinKeys(e: Env): PinKeys {
  const privateKey = e.PIN_SEAL_PRIVATE_KEY ?? (e.PIN_SEAL_PUBLIC_KEY ? undefined : DEVELOPMENT_PIN_PRIVATE_KEY);
  const ring = privateKey ? keyring('PIN_SEAL', e.PIN_SEAL_KEY_ID, privateKey, e.PIN_SEAL_PREVIOUS_KEYS) : undefined;
  const derived = privateKey ? publicKeyOf(privateKey) : undefined;
  if (derived && e.PIN_SEAL_PUBLIC_KEY && derived !== e.PIN_SEAL_PUBLIC_KEY) {
    throw new ConfigError('configuration: PIN_SEAL_PUBLIC_KEY is not the public key of PIN_SEAL_PRIVATE_KEY: callers would seal PINs the workers cannot open');
  }
  return {
    keyId: e.PIN_SEAL_KEY_ID,
    publicKey: e.PIN_SEAL_PUBLIC_KEY ?? derived!,
    ...(ring ? { privateKey: ring.key, ...(ring.previousKeys ? { previousKeys: ring.previousKeys } : {}) } : {}),
    isDevelopmentKey: !e.PIN_SEAL_PRIVATE_KEY && !e.PIN_SEAL_PUBLIC_KEY,
  };
}

/** The card action keys of the environment: development's own pair where none is set (requireSecrets keeps it there). */
export function cardActionKeys(e: Env): CardActionConfig {
  const signing = { keyId: e.CARD_ACTION_KEY_ID, privateKey: e.CARD_ACTION_SIGNING_KEY ?? DEVELOPMENT_CARD_ACTION_KEY, ...(e.CARD_ACTION_SUBJECT ? { subject: e.CARD_ACTION_SUBJECT } : {}) };
  let trustedKeys: Record<string, string> | undefined;
  try {
    trustedKeys = parseKeyList(e.CARD_ACTION_TRUSTED_KEYS);
  } catch (err) {
    throw new ConfigError(`configuration: CARD_ACTION_TRUSTED_KEYS ${(err as Error).message.replace('base64', 'base64 (Ed25519 public keys)')}`);
  }
  return { signing, trustedKeys: trustedKeys ?? { dev: cardActionPublicKeyOf(DEVELOPMENT_CARD_ACTION_KEY) } };
}
