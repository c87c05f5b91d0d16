/**
 * Temporal TLS from files (TEMPORAL_TLS_CA_PATH, TEMPORAL_TLS_SERVER_NAME, the client pair), read
 * at each connection, and the watch that tells a process its certificates changed on disk
 * (a cert-manager renewal swaps the mounted files in place).
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { loadConfig } from '../../src/config';
import { connectionOptions } from '../../src/temporal/connection';
import { watchCertificates } from '../../src/temporal/certificate-watch';
import { waitUntil } from '../helpers/wait';

describe('Temporal certificates', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'certs-'));
    for (const name of ['ca.pem', 'tls.crt', 'tls.key']) writeFileSync(join(dir, name), `${name} v1`);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const temporalConfig = () =>
    loadConfig({ TEMPORAL_TLS_CA_PATH: join(dir, 'ca.pem'), TEMPORAL_TLS_SERVER_NAME: 'temporal.internal', TEMPORAL_TLS_CERT_PATH: join(dir, 'tls.crt'), TEMPORAL_TLS_KEY_PATH: join(dir, 'tls.key') }).temporal;

  test('a CA and a server name reach the connection, read from the files at each connection', () => {
    const t = temporalConfig();
    expect(t.tls).toBe(true);
    const tlsOf = () => connectionOptions(t).tls as TLSConfig;
    const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString();
    expect(text(tlsOf().serverRootCACertificate)).toBe('ca.pem v1');
    expect(tlsOf().serverNameOverride).toBe('temporal.internal');
    writeFileSync(join(dir, 'tls.crt'), 'tls.crt v2');
    expect(text(tlsOf().clientCertPair?.crt)).toBe('tls.crt v2');
  });

  test('a bad server name is refused naming the variable', () => {
    expect(() => loadConfig({ TEMPORAL_TLS_SERVER_NAME: 'not a name' })).toThrow(/^configuration: TEMPORAL_TLS_SERVER_NAME must be a DNS name/);
  });

  test('the watch tells once per change of content, also through a swap of the file, and not for a touch', async () => {
    let changes = 0;
    const stop = watchCertificates(temporalConfig(), () => changes++, 20);
    try {
      writeFileSync(join(dir, 'ca.pem'), 'ca.pem v1'); // same content: no change
      await new Promise((r) => setTimeout(r, 150));
      expect(changes).toBe(0);
      // As Kubernetes does it: the new file written aside, then moved over the old one.
      writeFileSync(join(dir, 'tls.key.new'), 'tls.key v2');
      renameSync(join(dir, 'tls.key.new'), join(dir, 'tls.key'));
      await waitUntil(async () => changes === 1, 5000, 'the change to be told');
      await new Promise((r) => setTimeout(r, 150));
      expect(changes).toBe(1);
    } finally {
      stop();
    }
  });

  test('without certificate files nothing is watched', () => {
    expect(watchCertificates(loadConfig({}).temporal, () => undefined)()).toBeUndefined();
  });
});
