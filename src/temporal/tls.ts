/** Temporal TLS from certificate files: one reading for the processes' config, the client package and the CLI. */
import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';

/** TLS options from certificate files (the processes' config, the client's optionsFromEnv and the CLI). */
export function tlsFromFiles(files: { certPath?: string; keyPath?: string; caPath?: string; serverName?: string }): TLSConfig {
  return {
    ...(files.certPath && files.keyPath ? { clientCertPair: { crt: readFileSync(files.certPath), key: readFileSync(files.keyPath) } } : {}),
    ...(files.caPath ? { serverRootCACertificate: readFileSync(files.caPath) } : {}),
    ...(files.serverName ? { serverNameOverride: files.serverName } : {}),
  };
}
