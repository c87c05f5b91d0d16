/**
 * Who may use the codec endpoint. Decrypted payloads hold identity data, so the endpoint
 * answers only callers it can authenticate; the `Origin` header, which any script can set,
 * only decides CORS and never authorises.
 *
 * - `loopback` (development: no CODEC_AUTH_TOKEN and no JWKS): callers on this machine only.
 * - `bearer`: `Authorization: Bearer <token>`, either the shared CODEC_AUTH_TOKEN (compared in
 *   constant time) or the access token the Temporal UI forwards for its signed-in user
 *   (`codec.passAccessToken`), verified against the identity provider's keys (CODEC_JWKS_URL).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';

export type CodecAuthConfig =
  | { mode: 'loopback' }
  | { mode: 'bearer'; token?: string; jwks?: JwksConfig };

/**
 * The identity provider whose access tokens open history. Issuer and audience are required: without
 * them any token the provider signed (another application's ID token, from the same tenant) would do.
 */
export interface JwksConfig {
  url: string;
  issuer: string;
  audience: string;
}

/** Asymmetric algorithms only: a key set never authorises a token signed with a shared secret or none. */
const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** Clocks of the identity provider and ours may differ a little; a token past its exp by more is refused. */
const CLOCK_TOLERANCE_S = 30;

export type AuthVerdict = { ok: true } | { ok: false; status: 401 | 403; reason: string };

export interface CodecAuthorizer {
  authorize(req: { remoteAddress?: string; authorization?: string }): Promise<AuthVerdict>;
}

export function createCodecAuthorizer(config: CodecAuthConfig, keys?: JWTVerifyGetKey): CodecAuthorizer {
  if (config.mode === 'loopback') {
    return {
      authorize: async ({ remoteAddress }) => (isLoopback(remoteAddress) ? { ok: true } : { ok: false, status: 403, reason: 'development mode answers loopback callers only' }),
    };
  }
  const tokenDigest = config.token === undefined ? undefined : digest(config.token);
  const jwks = config.jwks;
  const getKey = keys ?? (jwks ? createRemoteJWKSet(new URL(jwks.url)) : undefined);
  return {
    async authorize({ authorization }) {
      const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
      if (!presented) return { ok: false, status: 401, reason: 'a bearer token is required' };
      if (tokenDigest && timingSafeEqual(digest(presented), tokenDigest)) return { ok: true };
      if (getKey && jwks && (await validJwt(presented, getKey, jwks))) return { ok: true };
      return { ok: false, status: 401, reason: 'the bearer token is not accepted' };
    },
  };
}

/** Equal-length digests, so the comparison takes the same time whatever the token's length. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Signed by the identity provider, for us (issuer and audience), and expiring (a token without exp never would). */
async function validJwt(token: string, getKey: JWTVerifyGetKey, jwks: JwksConfig): Promise<boolean> {
  try {
    await jwtVerify(token, getKey, {
      issuer: jwks.issuer,
      audience: jwks.audience,
      algorithms: JWT_ALGORITHMS,
      requiredClaims: ['exp', 'iss', 'aud'],
      clockTolerance: CLOCK_TOLERANCE_S,
    });
    return true;
  } catch {
    return false;
  }
}

function isLoopback(ip: string | undefined): boolean {
  const n = ip?.startsWith('::ffff:') ? ip.slice(7) : (ip ?? '');
  return n === '::1' || n.startsWith('127.');
}
