/**
 * Unbounded provider fields (issue 45, case 10): an answer larger than any the provider sends is
 * dropped as it streams in; a presigned upload URL on plain http or an internal address is refused
 * before a byte of an applicant's document leaves the worker; outside development the provider is
 * reached over https only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertProviderTransport, loadConfig } from '../../src/config';
import { createProviderClient } from '../../src/provider/client';
import { isProviderError } from '../../src/provider/errors';
import { uploadUrlRule } from '../../src/provider/uploads';

describe('an answer larger than the provider sends', () => {
  let server: Server;
  let baseUrl: string;
  let written = 0;
  beforeAll(async () => {
    // A misbehaving endpoint: it streams 8 MiB of JSON-looking bytes and would go on.
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const push = () => {
        while (written < 8 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', push);
        }
        res.end('{}');
      };
      push();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise((r) => server.close(() => r(undefined))));

  test('fails InvalidResponse (ANSWER_TOO_LARGE) once it passes the cap', async () => {
    const provider = createProviderClient({ ...loadConfig({}).provider, baseUrl });
    try {
      const err = await provider.getWalletBalance().then(() => undefined, (e: unknown) => e);
      expect(isProviderError(err, 'InvalidResponse')).toBe(true);
      expect((err as { code?: string }).code).toBe('ANSWER_TOO_LARGE');
    } finally {
      await provider.close();
    }
  });
});

describe('where a document may be PUT', () => {
  const origin = 'http://127.0.0.1:4010';
  test.each([
    ['https://uploads.provider.example/put/abc?sig=1', undefined],
    ['http://127.0.0.1:4010/uploads/abc', undefined],
    ['http://uploads.provider.example/put/abc', "must be an https URL (or on the provider's own origin)"],
    ['https://169.254.169.254/latest/meta-data', 'must not point at a private, loopback or link-local address'],
    ['https://10.0.0.7/upload', 'must not point at a private, loopback or link-local address'],
    ['https://127.0.0.1:9000/upload', 'must not point at a private, loopback or link-local address'],
    ['https://[::1]/upload', 'must not point at a private, loopback or link-local address'],
    ['https://metadata.google.internal/computeMetadata', 'must not point at a private, loopback or link-local address'],
    ['not a url', 'must be an absolute URL'],
  ])('%s → %s', (url, rule) => {
    expect(uploadUrlRule(url, origin)).toBe(rule);
  });
});

describe('the provider over https outside development', () => {
  test('an http address is refused unless it is loopback (a sandbox on this machine) or in development', () => {
    expect(() => assertProviderTransport(loadConfig({ PROVIDER_BASE_URL: 'http://provider.example' }))).toThrow(/PROVIDER_BASE_URL must be an https:\/\/ URL outside development/);
    expect(() => assertProviderTransport(loadConfig({ PROVIDER_BASE_URL: 'https://provider.example' }))).not.toThrow();
    expect(() => assertProviderTransport(loadConfig({ PROVIDER_BASE_URL: 'http://127.0.0.1:4010' }))).not.toThrow();
    expect(() => assertProviderTransport(loadConfig({ PROVIDER_BASE_URL: 'http://provider.example', CARD_ISSUING_DEVELOPMENT: 'true' }))).not.toThrow();
  });
});
