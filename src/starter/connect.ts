/**
 * The CLI's (and our tools') way to the typed client: the validated configuration of this process
 * (src/config.ts) turned into the package's ConnectOptions. Other services build those options
 * themselves (or with optionsFromEnv); the package reads no environment.
 */
import { connectCardIssuingClient, type CardIssuingClient, type ConnectOptions } from '../client';
import type { CodecKeys } from '../codec/payload-codec';
import type { Config } from '../config';
import type { Tracing } from '../observability/tracing';
import { connectionOptions } from '../temporal/connection';

/** What the typed client needs of a process's configuration. */
export type ClientConfig = Pick<Config, 'temporal' | 'codec' | 'pin' | 'cardActions' | 'development'>;

export function connectOptionsOf(config: ClientConfig): ConnectOptions {
  const { address, tls, apiKey } = connectionOptions(config.temporal);
  return {
    address,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    codec: keysOf(config.codec),
    // The development PIN key is public: outside development a PIN is sealed only to a key an operator set.
    ...(config.pin.isDevelopmentKey && !config.development ? {} : { pinKey: { keyId: config.pin.keyId, publicKey: config.pin.publicKey } }),
    // Card actions are signed with this process's key; outside development the workers trust only the keys an operator listed.
    cardActionKey: config.cardActions.signing,
    ...(tls === undefined || tls === null ? {} : { tls }),
    ...(apiKey === undefined ? {} : { apiKey }),
  };
}

/** A client with its own connection, from the validated configuration (with the process's tracing, when on). */
export function createCardIssuingClient(config: ClientConfig, opts: { tracing?: Tracing } = {}): Promise<CardIssuingClient> {
  const interceptors = opts.tracing?.clientInterceptors();
  return connectCardIssuingClient({ ...connectOptionsOf(config), ...(interceptors ? { interceptors } : {}) });
}

/** Only the keys: the rest of a config's keyring (ports, auth) is not the client's. */
function keysOf(keys: CodecKeys): CodecKeys {
  return { keyId: keys.keyId, key: keys.key, ...(keys.previousKeys ? { previousKeys: keys.previousKeys } : {}) };
}
