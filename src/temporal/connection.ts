/** Connection options for a Temporal frontend: local dev server, or a cluster with TLS (mTLS, a private CA, a server name) or an API key. */
import type { ConnectionOptions, TLSConfig } from '@temporalio/client';
import type { NativeConnectionOptions } from '@temporalio/worker';
import type { Config } from '../config';
import { clientInterceptors } from './client-interceptors';
import { tlsFromFiles } from './tls';

/**
 * Also valid as the client's ConnectionOptions (a subset of both); clients use clientConnectionOptions.
 * Certificates are read from their files at each call: a process that reconnects after they
 * changed (certificate-watch.ts) gets the new ones.
 */
export function connectionOptions(t: Config['temporal']): NativeConnectionOptions & { address: string } {
  return { address: t.address, tls: tlsOf(t), apiKey: t.apiKey };
}

function tlsOf(t: Config['temporal']): TLSConfig | undefined {
  const files = { certPath: t.tlsCertPath, keyPath: t.tlsKeyPath, caPath: t.tlsCaPath, serverName: t.tlsServerName };
  if (files.certPath || files.caPath || files.serverName) return tlsFromFiles(files);
  return t.tls ? {} : undefined;
}

/** A client Connection's options: the above, with the SDK's retries guarded against a closed connection (client-interceptors.ts). */
export function clientConnectionOptions(t: Config['temporal']): ConnectionOptions & { address: string } {
  return { ...connectionOptions(t), interceptors: clientInterceptors() };
}

