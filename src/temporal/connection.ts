/** Connection options for a Temporal frontend: local dev server, or a cluster with mTLS or an API key. */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from '@temporalio/client';
import type { NativeConnectionOptions } from '@temporalio/worker';
import type { Config } from '../config';
import { clientInterceptors } from './client-interceptors';

/** Also valid as the client's ConnectionOptions (a subset of both); clients use clientConnectionOptions. */
export function connectionOptions(t: Config['temporal']): NativeConnectionOptions & { address: string } {
  const tls = t.tlsCertPath
    ? { clientCertPair: { crt: readFileSync(t.tlsCertPath), key: readFileSync(t.tlsKeyPath!) } }
    : t.tls
      ? {}
      : undefined;
  return { address: t.address, tls, apiKey: t.apiKey };
}

/** A client Connection's options: the above, with the SDK's retries guarded against a closed connection (client-interceptors.ts). */
export function clientConnectionOptions(t: Config['temporal']): ConnectionOptions & { address: string } {
  return { ...connectionOptions(t), interceptors: clientInterceptors() };
}
