/** The codec endpoint asks who is calling: loopback only in development, a bearer token (or the UI's forwarded access token) otherwise. */
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair } from 'jose';
import { assertCodecEndpointAuth, loadConfig } from '../../src/config';
import { createCodecAuthorizer } from '../../src/codec/codec-auth';
import { startCodecServer, type CodecServer } from '../../src/codec/codec-server';
import { createPayloadCodec } from '../../src/codec/payload-codec';

const codec = createPayloadCodec({ keyId: 'test', key: Buffer.alloc(32, 5).toString('base64') });
const TOKEN = 'codec-token-0123456789abcdef';
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
    expect(await loopbackOnly.authorize({ remoteAddress: '::ffff:127.0.0.1' })).toEqual({ ok: true });
    expect(await loopbackOnly.authorize({ remoteAddress: '10.1.2.3', authorization: `Bearer ${TOKEN}` })).toMatchObject({ ok: false, status: 403 });
  });

  test('with a token: none, a wrong one, and the right one from a foreign origin are refused; Origin alone never authorises', async () => {
    const app = await serve(createCodecAuthorizer({ mode: 'bearer', token: TOKEN }));
    expect((await decode(app, { origin: UI })).statusCode).toBe(401);
    expect((await decode(app, { origin: UI, authorization: 'Bearer wrong-token-000000000' })).statusCode).toBe(401);
    expect((await decode(app, { origin: UI, authorization: `Basic ${TOKEN}` })).statusCode).toBe(401);
    expect((await decode(app, { origin: 'https://evil.example', authorization: `Bearer ${TOKEN}` })).statusCode).toBe(403);
    expect((await decode(app, { origin: UI, authorization: `Bearer ${TOKEN}` })).statusCode).toBe(200);
    // Not tied to loopback: a token holder elsewhere is served.
    expect(await createCodecAuthorizer({ mode: 'bearer', token: TOKEN }).authorize({ remoteAddress: '10.1.2.3', authorization: `Bearer ${TOKEN}` })).toEqual({ ok: true });
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
      new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(jwks.issuer).setAudience(claims.aud).setIssuedAt().setExpirationTime(claims.exp).sign(privateKey);
    expect((await decode(app, { origin: UI, authorization: `Bearer ${await sign({ aud: 'temporal-ui', exp: '5m' })}` })).statusCode).toBe(200);
    expect((await decode(app, { origin: UI, authorization: `Bearer ${await sign({ aud: 'someone-else', exp: '5m' })}` })).statusCode).toBe(401);
    expect((await decode(app, { origin: UI, authorization: `Bearer ${await sign({ aud: 'temporal-ui', exp: '-1m' })}` })).statusCode).toBe(401);
  });

  test('a token the identity provider signed is refused unless it is for us and expires: another issuer, no exp, no aud', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] });
    const jwks = { url: 'https://idp.example/jwks', issuer: 'https://idp.example', audience: 'temporal-ui' };
    const app = await serve(createCodecAuthorizer({ mode: 'bearer', jwks }, keys));
    const base = () => new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuedAt();
    const status = async (jwt: string) => (await decode(app, { origin: UI, authorization: `Bearer ${jwt}` })).statusCode;
    expect(await status(await base().setIssuer(jwks.issuer).setAudience(jwks.audience).setExpirationTime('5m').sign(privateKey))).toBe(200);
    // Another application's ID token from the same tenant: the right issuer, another audience; and no audience at all.
    expect(await status(await base().setIssuer(jwks.issuer).setAudience('another-app').setExpirationTime('5m').sign(privateKey))).toBe(401);
    expect(await status(await base().setIssuer(jwks.issuer).setExpirationTime('5m').sign(privateKey))).toBe(401);
    expect(await status(await base().setIssuer('https://other.example').setAudience(jwks.audience).setExpirationTime('5m').sign(privateKey))).toBe(401);
    // A token that never expires.
    expect(await status(await base().setIssuer(jwks.issuer).setAudience(jwks.audience).sign(privateKey))).toBe(401);
  });

  test('JWKS mode needs an https key set, an issuer and an audience, or the process does not start', () => {
    const jwks = { CODEC_JWKS_URL: 'https://idp.example/jwks', CODEC_JWT_ISSUER: 'https://idp.example', CODEC_JWT_AUDIENCE: 'temporal-ui' };
    expect(loadConfig(jwks).codec.auth).toEqual({ mode: 'bearer', jwks: { url: jwks.CODEC_JWKS_URL, issuer: jwks.CODEC_JWT_ISSUER, audience: jwks.CODEC_JWT_AUDIENCE } });
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
