/**
 * The CLI's (and our tools') way to the typed client: the validated configuration of this process
 * (src/config.ts) turned into the package's ConnectOptions. Other services build those options
 * themselves (or with optionsFromEnv); the package reads no environment.
 */
import { connectCardIssuingClient, type CardIssuingClient, type ConnectOptions } from '../client';
import type { Config } from '../config';
import type { Tracing } from '../observability/tracing';
import { connectionOptions } from '../temporal/connection';

export function connectOptionsOf(config: Pick<Config, 'temporal' | 'codec'>): ConnectOptions {
  const { address, tls, apiKey } = connectionOptions(config.temporal);
  return {
    address,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    codec: { keyId: config.codec.keyId, key: config.codec.key },
    ...(tls === undefined || tls === null ? {} : { tls }),
    ...(apiKey === undefined ? {} : { apiKey }),
  };
}

/** A client with its own connection, from the validated configuration (with the process's tracing, when on). */
export function createCardIssuingClient(config: Pick<Config, 'temporal' | 'codec'>, opts: { tracing?: Tracing } = {}): Promise<CardIssuingClient> {
  const interceptors = opts.tracing?.clientInterceptors();
  return connectCardIssuingClient({ ...connectOptionsOf(config), ...(interceptors ? { interceptors } : {}) });
}
