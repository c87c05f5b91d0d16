/**
 * The codec endpoint asks who is calling: loopback only in development, a bearer token (or the UI's
 * forwarded access token) otherwise; and what they may do: decoding and encoding are separate grants.
 */
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, type JWTPayload } from 'jose';
import { assertCodecEndpointAuth, loadConfig } from '../../src/config';
import { DEFAULT_DECODE_ROLE, DEFAULT_ENCODE_ROLE, createCodecAuthorizer, type CodecAuthConfig } from '../../src/codec/codec-auth';
import { buildCodecApp, startCodecServer, type CodecServer } from '../../src/codec/codec-server';
import { createPayloadCodec } from '../../src/codec/payload-codec';

const codec = createPayloadCodec({ keyId: 'test', key: Buffer.alloc(32, 5).toString('base64') });
const TOKEN = 'codec-token-0123456789abcdef';
const ENCODE_TOKEN = 'codec-encode-token-0123456789';
/** The decode role, as every UI user who may read history carries it. */
const DECODER = { roles: [DEFAULT_DECODE_ROLE] };
const UI = 'http://localhost:8233';
const body = { payloads: [] };

const servers: CodecServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function serve(auth?: ReturnType<typeof createCodecAuthorizer>) {
  const server = await startCodecServer({ port: 0, codec, auth });
  servers.push(server);
  return server;
}

async function decode(server: CodecServer, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { statusCode: res.status, headers: res.headers };
}

describe('codec endpoint authentication', () => {
  test('development (no token configured): loopback callers only', async () => {
    expect((await decode(await serve())).statusCode).toBe(200);
    const loopbackOnly = createCodecAuthorizer({ mode: 'loopback' });
    expect(await loopbackOnly.authorize({ remoteAddress: '::ffff:127.0.0.1', operation: 'decode' })).toEqual({ ok: true, caller: { kind: 'loopback' }, may: ['decode'] });
    expect(await loopbackOnly.authorize({ remoteAddress: '10.1.2.3', authorization: `Bearer ${TOKEN}`, operation: 'decode' })).toMatchObject({ ok: false, status: 403 });
  });

  test('with a token: none, a wrong one, and the right one from a foreign origin are refused; Origin alone never authorises', async () => {
    const app = await serve(createCodecAuthorizer({ mode: 'bearer', token: TOKEN }));
    expect((await decode(app, { origin: UI })).statusCode).toBe(401);
    expect((await decode(app, { origin: UI, authorization: 'Bearer wrong-token-000000000' })).statusCode).toBe(401);
    expect((await decode(app, { origin: UI, authorization: `Basic ${TOKEN}` })).statusCode).toBe(401);
    expect((await decode(app, { origin: 'https://evil.example', authorization: `Bearer ${TOKEN}` })).statusCode).toBe(403);
    expect((await decode(app, { origin: UI, authorization: `Bearer ${TOKEN}` })).statusCode).toBe(200);
    // Not tied to loopback: a token holder elsewhere is served.
    expect(await createCodecAuthorizer({ mode: 'bearer', token: TOKEN }).authorize({ remoteAddress: '10.1.2.3', authorization: `Bearer ${TOKEN}`, operation: 'decode' })).toEqual({
      ok: true,
      caller: { kind: 'shared-token' },
      may: ['decode'],
    });
    // The CLI sends no Origin.
    expect((await decode(app, { authorization: `Bearer ${TOKEN}` })).statusCode).toBe(200);
    // A browser's preflight carries no credentials; it learns that Authorization may be sent.
    const preflight = await fetch(`${app.url}/decode`, { method: 'OPTIONS', headers: { origin: UI, 'access-control-request-method': 'POST' } });
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
  });

  test("the Temporal UI's forwarded access token is accepted when the identity provider signed it for us", async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const keys = createLocalJWKSet({ keys: [jwk] });
    const jwks = { url: 'https://idp.example/jwks', issuer: 'https://idp.example', audience: 'temporal-ui' };
    const app = await serve(createCodecAuthorizer({ mode: 'bearer', jwks }, keys));
    const sign = (claims: { aud: string; exp: string }) =>
      new SignJWT(DECODER).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject('alice').setIssuer(jwks.issuer).setAudience(claims.aud).setIssuedAt().setExpirationTime(claims.exp).sign(privateKey);
    expect((await decode(app, { origin: UI, authorization: `Bearer ${await sign({ aud: 'temporal-ui', exp: '5m' })}` })).statusCode).toBe(200);
    expect((await decode(app, { origin: UI, authorization: `Bearer ${await sign({ aud: 'someone-else', exp: '5m' })}` })).statusCode).toBe(401);
    expect((await decode(app, { origin: UI, authorization: `Bearer ${await sign({ aud: 'temporal-ui', exp: '-1m' })}` })).statusCode).toBe(401);
  });

  test('a token the identity provider signed is refused unless it is for us, expires and names its subject: another issuer, no exp, no aud, no sub', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] });
    const jwks = { url: 'https://idp.example/jwks', issuer: 'https://idp.example', audience: 'temporal-ui' };
    const app = await serve(createCodecAuthorizer({ mode: 'bearer', jwks }, keys));
    const base = (sub = 'alice') => new SignJWT(DECODER).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject(sub).setIssuedAt();
    const status = async (jwt: string) => (await decode(app, { origin: UI, authorization: `Bearer ${jwt}` })).statusCode;
    expect(await status(await base().setIssuer(jwks.issuer).setAudience(jwks.audience).setExpirationTime('5m').sign(privateKey))).toBe(200);
    // Another application's ID token from the same tenant: the right issuer, another audience; and no audience at all.
    expect(await status(await base().setIssuer(jwks.issuer).setAudience('another-app').setExpirationTime('5m').sign(privateKey))).toBe(401);
    expect(await status(await base().setIssuer(jwks.issuer).setExpirationTime('5m').sign(privateKey))).toBe(401);
    expect(await status(await base().setIssuer('https://other.example').setAudience(jwks.audience).setExpirationTime('5m').sign(privateKey))).toBe(401);
    // A token that never expires.
    expect(await status(await base().setIssuer(jwks.issuer).setAudience(jwks.audience).sign(privateKey))).toBe(401);
    // A token that names nobody: the audit log could not say who read what.
    expect(await status(await new SignJWT(DECODER).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(jwks.issuer).setAudience(jwks.audience).setExpirationTime('5m').sign(privateKey))).toBe(401);
    expect(await status(await base('').setIssuer(jwks.issuer).setAudience(jwks.audience).setExpirationTime('5m').sign(privateKey))).toBe(401);
  });

  test('JWKS mode needs an https key set, an issuer and an audience, or the process does not start', () => {
    const jwks = { CODEC_JWKS_URL: 'https://idp.example/jwks', CODEC_JWT_ISSUER: 'https://idp.example', CODEC_JWT_AUDIENCE: 'temporal-ui' };
    expect(loadConfig(jwks).codec.auth).toEqual({
      mode: 'bearer',
      jwks: { url: jwks.CODEC_JWKS_URL, issuer: jwks.CODEC_JWT_ISSUER, audience: jwks.CODEC_JWT_AUDIENCE, roleClaims: ['roles', 'groups'], decodeRole: DEFAULT_DECODE_ROLE, encodeRole: DEFAULT_ENCODE_ROLE },
    });
    expect(() => loadConfig({ ...jwks, CODEC_JWT_AUDIENCE: '' })).toThrow(/CODEC_JWT_AUDIENCE must be set when CODEC_JWKS_URL is/);
    expect(() => loadConfig({ ...jwks, CODEC_JWT_ISSUER: undefined })).toThrow(/CODEC_JWT_ISSUER must be set when CODEC_JWKS_URL is/);
    expect(() => loadConfig({ ...jwks, CODEC_JWKS_URL: 'http://idp.example/jwks' })).toThrow(/CODEC_JWKS_URL must be an https:\/\/ URL/);
  });

  test('an unauthenticated request is answered 401 before its body is read: 16 MiB of non-JSON is never parsed', async () => {
    const app = await serve(createCodecAuthorizer({ mode: 'bearer', token: TOKEN }));
    const junk = Buffer.alloc(16 * 1024 * 1024 - 1024, 0x7b); // '{{{{…': a parse would answer 400
    const res = await fetch(`${app.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: junk });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'a bearer token is required' });
    // The same body with the token is parsed, and refused for what it is.
    const authed = await fetch(`${app.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: junk });
    expect(authed.status).toBe(400);
  });

  test('a real payload key without CODEC_AUTH_TOKEN stops the codec endpoint at start, naming the variable', () => {
    const key = Buffer.alloc(32, 9).toString('base64');
    expect(() => assertCodecEndpointAuth(loadConfig({ PAYLOAD_CODEC_KEY: key }))).toThrow(/CODEC_AUTH_TOKEN must be set/);
    expect(() => assertCodecEndpointAuth(loadConfig({ PAYLOAD_CODEC_KEY: key, CODEC_AUTH_TOKEN: TOKEN }))).not.toThrow();
    expect(() => loadConfig({ CODEC_AUTH_TOKEN: 'short' })).toThrow(/CODEC_AUTH_TOKEN must be at least 16 characters/);
  });
});

describe('codec endpoint roles: /decode and /encode are separate grants', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const payloads = [{ metadata: { encoding: b64('json/plain') }, data: b64('{"cardholder":"Alice"}') }];
  const jwks = { url: 'https://idp.example/jwks', issuer: 'https://idp.example', audience: 'temporal-ui' };
  let signer: { keys: ReturnType<typeof createLocalJWKSet>; sign: (claims: JWTPayload) => Promise<string> };
  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] });
    const sign = (claims: JWTPayload) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject('alice').setIssuer(jwks.issuer).setAudience(jwks.audience).setIssuedAt().setExpirationTime('5m').sign(privateKey);
    signer = { keys, sign };
  });

  const appWith = (config: CodecAuthConfig) => buildCodecApp({ codec, auth: createCodecAuthorizer(config, signer.keys) });
  const call = async (app: ReturnType<typeof buildCodecApp>, op: 'decode' | 'encode', bearer?: string) => {
    const res = await app.inject({ method: 'POST', url: `/${op}`, headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) }, payload: { payloads } });
    return { status: res.statusCode, body: res.json() as { error?: string; payloads?: unknown[] } };
  };

  test('CODEC_AUTH_TOKEN decodes but may not encode (403 naming the encode role, nothing encoded); CODEC_ENCODE_TOKEN encodes but may not decode', async () => {
    const app = appWith({ mode: 'bearer', token: TOKEN, encodeToken: ENCODE_TOKEN });
    expect(await call(app, 'decode', TOKEN)).toMatchObject({ status: 200, body: { payloads } });
    const refused = await call(app, 'encode', TOKEN);
    expect(refused).toEqual({ status: 403, body: { error: expect.stringMatching(/^the encode role is required: the shared token may decode only \(encode needs CODEC_ENCODE_TOKEN\)$/) } });
    const encoded = await call(app, 'encode', ENCODE_TOKEN);
    expect(encoded.status).toBe(200);
    expect(encoded.body.payloads).toHaveLength(1);
    expect(JSON.stringify(encoded.body)).not.toContain(payloads[0].data);
    expect(await call(app, 'decode', ENCODE_TOKEN)).toEqual({ status: 403, body: { error: expect.stringMatching(/the decode role is required: the encode token may encode only/) } });
    // Unauthenticated stays 401 for either operation: nobody learns which roles exist.
    expect((await call(app, 'encode')).status).toBe(401);
    expect((await call(app, 'encode', 'not-a-token-0000000000')).status).toBe(401);
    // Without CODEC_ENCODE_TOKEN (nor JWKS), nobody encodes.
    const noEncoder = appWith({ mode: 'bearer', token: TOKEN });
    expect((await call(noEncoder, 'encode', TOKEN)).body.error).toMatch(/\(nobody here may encode\)$/);
    await Promise.all([app.close(), noEncoder.close()]);
  });

  test('a forwarded JWT decodes only with the decode role and encodes only with the encode role; issuer and audience alone are not enough', async () => {
    const app = appWith({ mode: 'bearer', token: TOKEN, jwks });
    const jwt = (claims: JWTPayload) => signer.sign(claims);
    // Signed for us, but no role claim at all, or the wrong role.
    expect(await call(app, 'decode', await jwt({}))).toEqual({ status: 403, body: { error: `the "${DEFAULT_DECODE_ROLE}" role is required to decode: this token's roles or groups claim holds none of our roles` } });
    expect((await call(app, 'decode', await jwt({ roles: ['card-issuing-admin'], groups: ['everyone'] }))).status).toBe(403);
    // The decode role, in `roles`, in `groups`, or as a lone string.
    expect((await call(app, 'decode', await jwt({ roles: ['other', DEFAULT_DECODE_ROLE] }))).status).toBe(200);
    expect((await call(app, 'decode', await jwt({ groups: [DEFAULT_DECODE_ROLE] }))).status).toBe(200);
    expect((await call(app, 'decode', await jwt({ roles: DEFAULT_DECODE_ROLE }))).status).toBe(200);
    // The decode role does not encode.
    expect(await call(app, 'encode', await jwt({ roles: [DEFAULT_DECODE_ROLE] }))).toEqual({
      status: 403,
      body: { error: `the "${DEFAULT_ENCODE_ROLE}" role is required to encode: this token's roles or groups claim holds only "${DEFAULT_DECODE_ROLE}"` },
    });
    // The encode role encodes, and does not decode; both roles do both.
    expect((await call(app, 'encode', await jwt({ roles: [DEFAULT_ENCODE_ROLE] }))).status).toBe(200);
    expect((await call(app, 'decode', await jwt({ roles: [DEFAULT_ENCODE_ROLE] }))).status).toBe(403);
    const both = await jwt({ groups: [DEFAULT_DECODE_ROLE, DEFAULT_ENCODE_ROLE] });
    expect([(await call(app, 'decode', both)).status, (await call(app, 'encode', both)).status]).toEqual([200, 200]);
    // The verdict says who and what they may do.
    expect(await createCodecAuthorizer({ mode: 'bearer', jwks }, signer.keys).authorize({ authorization: `Bearer ${await jwt({ roles: [DEFAULT_DECODE_ROLE, 'x'] })}`, operation: 'decode' })).toEqual({
      ok: true,
      caller: { kind: 'jwt', sub: 'alice', roles: [DEFAULT_DECODE_ROLE] },
      may: ['decode'],
    });
    await app.close();
  });

  test('role claim names and role values come from CODEC_JWT_ROLES_CLAIM, CODEC_DECODE_ROLE and CODEC_ENCODE_ROLE', async () => {
    const env = {
      CODEC_JWKS_URL: jwks.url,
      CODEC_JWT_ISSUER: jwks.issuer,
      CODEC_JWT_AUDIENCE: jwks.audience,
      CODEC_JWT_ROLES_CLAIM: 'https://example.com/roles, realm_access.roles',
      CODEC_DECODE_ROLE: 'Codec Readers',
      CODEC_ENCODE_ROLE: 'codec-writers',
    };
    const app = appWith(loadConfig(env).codec.auth);
    expect((await call(app, 'decode', await signer.sign({ 'https://example.com/roles': ['Codec Readers'] }))).status).toBe(200);
    expect((await call(app, 'decode', await signer.sign({ realm_access: { roles: ['Codec Readers'] } }))).status).toBe(200);
    expect((await call(app, 'encode', await signer.sign({ realm_access: { roles: ['codec-writers'] } }))).status).toBe(200);
    // A claim not configured counts for nothing, nor does the default role name.
    expect((await call(app, 'decode', await signer.sign({ roles: ['Codec Readers'] }))).status).toBe(403);
    expect((await call(app, 'decode', await signer.sign({ realm_access: { roles: [DEFAULT_DECODE_ROLE] } }))).status).toBe(403);
    await app.close();
  });

  test('/encode without the encode role is refused before its body is read: 16 MiB of non-JSON is never parsed', async () => {
    const app = await serve(createCodecAuthorizer({ mode: 'bearer', token: TOKEN }));
    const junk = Buffer.alloc(16 * 1024 * 1024 - 1024, 0x7b);
    const res = await fetch(`${app.url}/encode`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: junk });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toMatch(/encode role is required/);
  });

  test('development (loopback): /decode as before; /encode only with CARD_ISSUING_DEVELOPMENT=true and the development payload key', async () => {
    const dev = appWith({ mode: 'loopback' });
    expect((await call(dev, 'decode')).status).toBe(200);
    expect(await call(dev, 'encode')).toEqual({ status: 403, body: { error: expect.stringMatching(/encode role is required: in development mode \/encode answers only with CARD_ISSUING_DEVELOPMENT=true/) } });
    expect((await call(appWith({ mode: 'loopback', encode: true }), 'encode')).status).toBe(200);
    expect(loadConfig({}).codec.auth).toEqual({ mode: 'loopback', encode: false });
    expect(loadConfig({ CARD_ISSUING_DEVELOPMENT: 'true' }).codec.auth).toEqual({ mode: 'loopback', encode: true });
    expect(loadConfig({ CARD_ISSUING_DEVELOPMENT: 'true', PAYLOAD_CODEC_KEY: Buffer.alloc(32, 9).toString('base64') }).codec.auth).toEqual({ mode: 'loopback', encode: false });
    // Not from elsewhere, even so.
    expect(await createCodecAuthorizer({ mode: 'loopback', encode: true }).authorize({ remoteAddress: '10.1.2.3', operation: 'encode' })).toMatchObject({ ok: false, status: 403 });
    await dev.close();
  });

  test('bad role settings stop the process at start, naming the variable and the rule', () => {
    expect(() => loadConfig({ CODEC_ENCODE_TOKEN: 'short' })).toThrow(/^configuration: CODEC_ENCODE_TOKEN must be at least 16 characters/);
    expect(() => loadConfig({ CODEC_AUTH_TOKEN: TOKEN, CODEC_ENCODE_TOKEN: TOKEN })).toThrow(/^configuration: CODEC_ENCODE_TOKEN must differ from CODEC_AUTH_TOKEN/);
    expect(() => loadConfig({ CODEC_ENCODE_ROLE: DEFAULT_DECODE_ROLE })).toThrow(/^configuration: CODEC_ENCODE_ROLE must differ from CODEC_DECODE_ROLE/);
    expect(() => loadConfig({ CODEC_JWT_ROLES_CLAIM: 'roles,,groups' })).toThrow(/^configuration: CODEC_JWT_ROLES_CLAIM must be a comma-separated list of claim names/);
    expect(() => loadConfig({ CODEC_DECODE_ROLE: ' padded' })).toThrow(/^configuration: CODEC_DECODE_ROLE must be a role name without surrounding spaces/);
    const key = Buffer.alloc(32, 9).toString('base64');
    const encodeOnly = loadConfig({ PAYLOAD_CODEC_KEY: key, CODEC_ENCODE_TOKEN: ENCODE_TOKEN });
    expect(() => assertCodecEndpointAuth(encodeOnly)).not.toThrow();
    expect(encodeOnly.codec.auth).toEqual({ mode: 'bearer', encodeToken: ENCODE_TOKEN });
  });
});
