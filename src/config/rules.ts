/**
 * What an entry point asks of the configuration beyond its shape: the secrets it may not take from
 * their public development defaults, and each process's own rule (the codec endpoint's, the worker's).
 */
import type { PinPrivateKeys } from '../codec/card-secrets';
import { ConfigError } from './errors';
import type { Config, Env, SecretName } from './index';

/** The provider sandbox's API secret, PROVIDER_API_SECRET's default: any other is a real provider's. */
export const SANDBOX_API_SECRET = 'secret_sandbox';

/**
 * CARD_ISSUING_DEVELOPMENT lets the public defaults in (requireSecrets), so it is refused where it
 * could only be a mistake with real stakes: a production build (NODE_ENV=production, as the image
 * sets) and a process that holds a real provider's secret.
 */
export function refuseDevelopmentWhereReal(e: Env, nodeEnv: string | undefined): void {
  if (!e.CARD_ISSUING_DEVELOPMENT) return;
  const where = nodeEnv === 'production' ? 'NODE_ENV=production' : e.PROVIDER_API_SECRET !== SANDBOX_API_SECRET ? `a real PROVIDER_API_SECRET (any but the sandbox's ${SANDBOX_API_SECRET})` : undefined;
  if (where) throw new ConfigError(`configuration: CARD_ISSUING_DEVELOPMENT must not be true with ${where}: development takes public default secrets, so set it only on a developer's machine`);
}

/** The secrets `env` leaves to their development defaults (the webhook secret is set when either it or the API secret is). */
export function developmentDefaults(env: NodeJS.ProcessEnv): SecretName[] {
  const unset = (name: string) => !env[name];
  const defaulted: SecretName[] = [];
  if (unset('PROVIDER_API_SECRET')) defaulted.push('PROVIDER_API_SECRET');
  if (unset('PROVIDER_WEBHOOK_SECRET') && unset('PROVIDER_API_SECRET')) defaulted.push('PROVIDER_WEBHOOK_SECRET');
  if (unset('PAYLOAD_CODEC_KEY')) defaulted.push('PAYLOAD_CODEC_KEY');
  if (unset('PIN_SEAL_PRIVATE_KEY')) defaulted.push('PIN_SEAL_PRIVATE_KEY');
  if (unset('CARD_ACTION_SIGNING_KEY')) defaulted.push('CARD_ACTION_SIGNING_KEY');
  if (unset('CARD_ACTION_TRUSTED_KEYS')) defaulted.push('CARD_ACTION_TRUSTED_KEYS');
  if (unset('SIGNAL_MAC_KEY')) defaulted.push('SIGNAL_MAC_KEY');
  return defaulted;
}

/**
 * An entry point's rule: each of `names` must be set, unless CARD_ISSUING_DEVELOPMENT says this is
 * development. The defaults are public (the sandbox's secret, constant keys): a process that took one
 * in production would accept forged webhooks or write history anyone can read. The chart and compose
 * never set the switch; `npm run demo` and the tests do.
 */
export function requireSecrets(...names: SecretName[]): (config: Config) => void {
  return (config) => {
    if (config.development) return;
    const missing = names.filter((name) => config.developmentDefaults.includes(name));
    if (missing.length === 0) return;
    const what = missing.length === 1 ? `${missing[0]} must be set` : `${missing.join(', ')} must be set`;
    throw new ConfigError(
      `configuration: ${what}: outside development no secret falls back to its public default (set CARD_ISSUING_DEVELOPMENT=true only on a developer's machine)`,
    );
  };
}

/**
 * The codec endpoint's own rule, checked where it starts: with a real payload key it decrypts
 * real data, so it must know who is calling (CODEC_AUTH_TOKEN or CODEC_JWKS_URL).
 */
export function assertCodecEndpointAuth(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  if (env.PIN_SEAL_PRIVATE_KEY || env.PIN_SEAL_PREVIOUS_KEYS) {
    throw new ConfigError('configuration: PIN_SEAL_PRIVATE_KEY must not be given to the codec endpoint: it decodes payloads for the UI and must never be able to open a PIN');
  }
  if (!config.codec.isDevelopmentKey && config.codec.auth.mode === 'loopback') {
    throw new ConfigError('configuration: CODEC_AUTH_TOKEN must be set (or CODEC_JWKS_URL) when PAYLOAD_CODEC_KEY is: outside development the codec endpoint requires a bearer token');
  }
}

/**
 * The worker's rule for the provider's address: outside development it is `https`, a loopback
 * address excepted (a sandbox on the same machine), so the signed requests and the answers that move
 * money never travel in the clear.
 */
export function assertProviderTransport(config: Config): void {
  if (config.development) return;
  const url = new URL(config.provider.baseUrl);
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || url.hostname.startsWith('127.');
  if (url.protocol !== 'https:' && !loopback) {
    throw new ConfigError('configuration: PROVIDER_BASE_URL must be an https:// URL outside development (a loopback address excepted, for a sandbox on this machine)');
  }
}

/** The worker's rule, checked where it starts: it opens PINs, so it holds the private key (PIN_SEAL_PRIVATE_KEY). */
export function assertPinKeys(config: Config): PinPrivateKeys {
  const { keyId, privateKey, previousKeys } = config.pin;
  if (!privateKey) throw new ConfigError('configuration: PIN_SEAL_PRIVATE_KEY must be set on a worker: it opens the PINs callers seal to PIN_SEAL_PUBLIC_KEY (docs/operations.md, "PIN keys")');
  return { keyId, privateKey, ...(previousKeys ? { previousKeys } : {}) };
}
