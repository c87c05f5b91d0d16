/**
 * PCI DSS 10.2: every /decode and /encode, served or refused, leaves one structured line naming who,
 * what, how many payloads, which keys, from where and the outcome; never a payload's content, never a
 * credential. The lines are captured from the pino destination the endpoint's logger writes to.
 */
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair } from 'jose';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { createLogger } from '../../src/logging';
import { DEFAULT_DECODE_ROLE, DEFAULT_ENCODE_ROLE, createCodecAuthorizer, type CodecAuthorizer } from '../../src/codec/codec-auth';
import { buildCodecApp } from '../../src/codec/codec-server';
import { createPayloadCodec } from '../../src/codec/payload-codec';

const TOKEN = 'codec-token-0123456789abcdef';
const ENCODE_TOKEN = 'codec-encode-token-0123456789';
const PAN = '4111111111111111';
const NAME = 'Alice Cardholder';
const codec = createPayloadCodec({ keyId: 'test', key: Buffer.alloc(32, 5).toString('base64') });
const jwks = { url: 'https://idp.example/jwks', issuer: 'https://idp.example', audience: 'temporal-ui' };

const toJson = (payloads: Payload[]) =>
  payloads.map((p) => ({
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: Buffer.from(p.data ?? []).toString('base64'),
  }));
const plain = toJson([defaultPayloadConverter.toPayload({ pan: PAN, name: NAME })!]);

/** An app whose logger knows no secret: what stays out of its lines stays out because it is never written. */
function audited(auth: CodecAuthorizer, allowedOrigins?: string[]) {
  const raw: string[] = [];
  const app = buildCodecApp({ codec, auth, allowedOrigins, logger: createLogger('codec', { level: 'debug', write: (line) => void raw.push(line) }) });
  const lines = () => raw.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { app, raw, lines };
}

const post = (app: ReturnType<typeof buildCodecApp>, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers } });

describe('codec endpoint audit log', () => {
  let sign: (roles: string[]) => Promise<string>;
  let keys: ReturnType<typeof createLocalJWKSet>;
  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] });
    sign = (roles) =>
      new SignJWT({ roles, email: 'alice@example.com' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject('user-42').setIssuer(jwks.issuer).setAudience(jwks.audience).setIssuedAt().setExpirationTime('5m').sign(privateKey);
  });

  test('an allowed /decode: one info line with the caller, the operation, the payload count, the key ids, the remote address and the outcome; no payload data, no token', async () => {
    const { app, raw, lines } = audited(createCodecAuthorizer({ mode: 'bearer', token: TOKEN }));
    const sealed = toJson(await codec.encode([defaultPayloadConverter.toPayload({ pan: PAN })!, defaultPayloadConverter.toPayload(NAME)!]));
    const res = await post(app, '/decode', { payloads: [...sealed, ...plain] }, { authorization: `Bearer ${TOKEN}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(plain[0].data); // the answer holds the data; the log line must not
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        component: 'codec',
        msg: 'codec decode',
        event: 'codec.access',
        operation: 'decode',
        outcome: 'allowed',
        status: 200,
        caller: { kind: 'shared-token' },
        may: ['decode'],
        payloads: 3,
        keyIds: ['test'],
        remoteAddress: '127.0.0.1',
        namespace: 'default',
        time: expect.any(String),
      }),
    ]);
    const text = raw.join('');
    for (const secret of [TOKEN, PAN, NAME, ...[...sealed, ...plain].map((p) => p.data)]) expect(text).not.toContain(secret);
    await app.close();
  });

  test('a refused /encode (the shared token decodes only): one warn line naming the caller and the reason; the body was never read, so no count', async () => {
    const { app, raw, lines } = audited(createCodecAuthorizer({ mode: 'bearer', token: TOKEN, encodeToken: ENCODE_TOKEN }));
    expect((await post(app, '/encode', { payloads: plain }, { authorization: `Bearer ${TOKEN}` })).statusCode).toBe(403);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'codec encode refused',
        operation: 'encode',
        outcome: 'refused',
        status: 403,
        caller: { kind: 'shared-token' },
        may: ['decode'],
        reason: expect.stringMatching(/encode role is required/),
        payloads: null,
        keyIds: [],
        remoteAddress: '127.0.0.1',
      }),
    ]);
    // An unknown bearer: anonymous, and what it presented is not repeated.
    const guess = 'guessed-token-0000000000000000';
    expect((await post(app, '/decode', { payloads: plain }, { authorization: `Bearer ${guess}` })).statusCode).toBe(401);
    expect(lines()[1]).toMatchObject({ level: 'warn', operation: 'decode', outcome: 'refused', status: 401, caller: { kind: 'anonymous' }, reason: 'the bearer token is not accepted' });
    // The encode token, allowed: the key id is the one the answer was sealed with.
    expect((await post(app, '/encode', { payloads: plain }, { authorization: `Bearer ${ENCODE_TOKEN}` })).statusCode).toBe(200);
    expect(lines()[2]).toMatchObject({ level: 'info', operation: 'encode', outcome: 'allowed', status: 200, caller: { kind: 'encode-token' }, payloads: 1, keyIds: ['test'] });
    expect(lines()).toHaveLength(3);
    const text = raw.join('');
    for (const secret of [TOKEN, ENCODE_TOKEN, guess, PAN, NAME, plain[0].data]) expect(text).not.toContain(secret);
    await app.close();
  });

  test('a JWT caller is named by its subject and our roles it holds, never by the token or its other claims', async () => {
    const { app, raw, lines } = audited(createCodecAuthorizer({ mode: 'bearer', jwks }, keys));
    const reader = await sign([DEFAULT_DECODE_ROLE, 'finance-team']);
    expect((await post(app, '/decode', { payloads: plain }, { authorization: `Bearer ${reader}` })).statusCode).toBe(200);
    expect((await post(app, '/encode', { payloads: plain }, { authorization: `Bearer ${reader}` })).statusCode).toBe(403);
    const writer = await sign([DEFAULT_ENCODE_ROLE]);
    expect((await post(app, '/encode', { payloads: plain }, { authorization: `Bearer ${writer}` })).statusCode).toBe(200);
    expect(lines()).toEqual([
      expect.objectContaining({ level: 'info', operation: 'decode', outcome: 'allowed', caller: { kind: 'jwt', sub: 'user-42', roles: [DEFAULT_DECODE_ROLE] }, payloads: 1 }),
      expect.objectContaining({ level: 'warn', operation: 'encode', outcome: 'refused', status: 403, caller: { kind: 'jwt', sub: 'user-42', roles: [DEFAULT_DECODE_ROLE] }, reason: expect.stringContaining(DEFAULT_ENCODE_ROLE) }),
      expect.objectContaining({ level: 'info', operation: 'encode', outcome: 'allowed', caller: { kind: 'jwt', sub: 'user-42', roles: [DEFAULT_ENCODE_ROLE] }, keyIds: ['test'] }),
    ]);
    const text = raw.join('');
    for (const secret of [reader, writer, 'alice@example.com', 'finance-team', PAN, NAME]) expect(text).not.toContain(secret);
    await app.close();
  });

  test('refusals after authentication, failed requests and malformed key ids are audited too; health checks and preflights are not codec access', async () => {
    const { app, lines } = audited(createCodecAuthorizer({ mode: 'bearer', token: TOKEN }), ['https://ui.example']);
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await post(app, '/decode', { payloads: plain }, { ...auth, origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await post(app, '/decode', '{"payloads":', auth)).statusCode).toBe(400);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const forged = [{ metadata: { encoding: b64('binary/encrypted'), 'encryption-key-id': b64('../../{"x":1}') }, data: b64('x') }];
    expect((await post(app, '/decode', { payloads: forged }, auth)).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'OPTIONS', url: '/decode', headers: { origin: 'https://ui.example' } })).statusCode).toBe(204);
    expect(lines()).toEqual([
      expect.objectContaining({ level: 'warn', outcome: 'refused', status: 403, caller: { kind: 'shared-token' }, reason: 'origin not allowed', payloads: null }),
      expect.objectContaining({ level: 'info', outcome: 'allowed', status: 400, caller: { kind: 'shared-token' }, payloads: null }),
      expect.objectContaining({ level: 'info', outcome: 'allowed', status: 400, payloads: 1, keyIds: ['(malformed)'] }),
    ]);
    await app.close();
  });
});
