/** Connection options for a Temporal frontend: local dev server, or a cluster with mTLS or an API key. */
import { readFileSync } from 'node:fs';
import type { NativeConnectionOptions } from '@temporalio/worker';
import type { Config } from '../config';

/** Also valid as the client's ConnectionOptions (a subset of both). */
export function connectionOptions(t: Config['temporal']): NativeConnectionOptions & { address: string } {
  const tls = t.tlsCertPath
    ? { clientCertPair: { crt: readFileSync(t.tlsCertPath), key: readFileSync(t.tlsKeyPath!) } }
    : t.tls
      ? {}
      : undefined;
  return { address: t.address, tls, apiKey: t.apiKey };
}
