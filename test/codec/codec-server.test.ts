import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { createCodecAuthorizer } from '../../src/codec/codec-auth';
import { CODEC_TIMEOUTS, buildCodecApp, startCodecServer, type CodecServer } from '../../src/codec/codec-server';
import { createPayloadCodec, ENCRYPTED_ENCODING } from '../../src/codec/payload-codec';

const PAN = '4111111111111111';
const codec = createPayloadCodec({ keyId: 'test', key: Buffer.alloc(32, 3).toString('base64') });
const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

describe('codec server over HTTP', () => {
  let server: CodecServer;
  beforeAll(async () => {
    // Development that says so (CARD_ISSUING_DEVELOPMENT=true, config.ts): loopback callers may encode too.
    server = await startCodecServer({ port: 0, codec, auth: createCodecAuthorizer({ mode: 'loopback', encode: true }) });
  });
  afterAll(() => server.close());

  const post = (path: string, body: unknown) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost:8233', 'x-namespace': 'default' },
      body: JSON.stringify(body),
    });

  it('binds to 127.0.0.1 on an ephemeral port', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('round-trips /encode then /decode, with CORS for the UI origin', async () => {
    const plain = defaultPayloadConverter.toPayload({ pan: PAN })!;
    const payloads = [{ metadata: { encoding: b64('json/plain') }, data: Buffer.from(plain.data!).toString('base64') }];

    const encodeResponse = await post('/encode', { payloads });
    expect(encodeResponse.status).toBe(200);
    expect(encodeResponse.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const encoded = (await encodeResponse.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
    expect(unb64(encoded.payloads[0].metadata.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(unb64(encoded.payloads[0].data)).not.toContain(PAN);

    const decodeResponse = await post('/decode', encoded);
    expect(decodeResponse.status).toBe(200);
    expect(await decodeResponse.json()).toEqual({ payloads });
  });

  it('refuses /encode to loopback callers unless development said so, encoding nothing', async () => {
    const decodeOnly = await startCodecServer({ port: 0, codec });
    try {
      const plain = defaultPayloadConverter.toPayload({ pan: PAN })!;
      const response = await fetch(`${decodeOnly.url}/encode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payloads: [{ metadata: { encoding: b64('json/plain') }, data: Buffer.from(plain.data!).toString('base64') }] }),
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: expect.stringMatching(/^the encode role is required/) });
    } finally {
      await decodeOnly.close();
    }
  });

  it('answers a preflight from the UI origin', async () => {
    const response = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://127.0.0.1:8233',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8233');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    expect(response.headers.get('access-control-allow-headers')).toMatch(/content-type.*x-namespace/);
  });
});

// Over real HTTP rather than `app.inject`: under Jest on Node 20, inject's light-my-request
// pulls in an ESM-only `cookie` that Jest cannot require.
describe('codec server edge cases', () => {
  let server: CodecServer;
  beforeAll(async () => {
    server = await startCodecServer({ port: 0, codec, allowedOrigins: ['https://ui.example'] });
  });
  afterAll(() => server.close());

  const preflight = (origin: string) => fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { origin } });
  const postRaw = (body: string) => fetch(`${server.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const toJson = (payloads: Payload[]) =>
    payloads.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      data: Buffer.from(p.data ?? []).toString('base64'),
    }));

  it('refuses a preflight from an origin not on the list, and sends it no CORS headers', async () => {
    const refused = await preflight('http://localhost:8233');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const allowed = await preflight('https://ui.example');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://ui.example');
  });

  it.each([
    ['not JSON', '{"payloads":', /JSON/i],
    ['no payloads', '{}', /payloads/],
    ['payloads not an array', '{"payloads":"x"}', /payloads/],
    ['data not base64', '{"payloads":[{"data":"not base64!"}]}', /payloads\.0\.data/],
    ['metadata not base64', '{"payloads":[{"metadata":{"encoding":"%%"}}]}', /payloads\.0\.metadata\.encoding/],
  ])('answers 400 with a JSON error for a bad body (%s)', async (_name, body, message) => {
    const response = await postRaw(body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(message);
  });

  it('answers 400 naming the key id when a payload cannot be decrypted', async () => {
    const other = createPayloadCodec({ keyId: 'elsewhere', key: Buffer.alloc(32, 4).toString('base64') });
    const sealed = await other.encode([defaultPayloadConverter.toPayload('x')!]);
    const response = await postRaw(JSON.stringify({ payloads: toJson(sealed) }));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/unknown encryption key id "elsewhere"/);
  });

  it('passes payloads without encryption through /decode', async () => {
    const payloads = [{ metadata: { [METADATA_ENCODING_KEY]: b64('binary/null') } }];
    const response = await postRaw(JSON.stringify({ payloads }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ payloads });
  });
});

describe('codec server timeouts (slowloris)', () => {
  it('bounds the time to receive a request, an idle socket and an idle kept-alive socket', async () => {
    const app = buildCodecApp({ codec });
    await app.ready();
    expect(app.server.requestTimeout).toBe(CODEC_TIMEOUTS.requestTimeout);
    expect(app.server.timeout).toBe(CODEC_TIMEOUTS.connectionTimeout);
    expect(app.server.keepAliveTimeout).toBe(CODEC_TIMEOUTS.keepAliveTimeout);
    expect(CODEC_TIMEOUTS.requestTimeout).toBeGreaterThan(0);
    await app.close();
  });
});
