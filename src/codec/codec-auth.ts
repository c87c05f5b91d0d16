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
  | { mode: 'bearer'; token?: string; jwks?: { url: string; issuer?: string; audience?: string } };

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
      if (getKey && (await validJwt(presented, getKey, jwks))) return { ok: true };
      return { ok: false, status: 401, reason: 'the bearer token is not accepted' };
    },
  };
}

/** Equal-length digests, so the comparison takes the same time whatever the token's length. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

async function validJwt(token: string, getKey: JWTVerifyGetKey, opts?: { issuer?: string; audience?: string }): Promise<boolean> {
  try {
    await jwtVerify(token, getKey, { issuer: opts?.issuer, audience: opts?.audience });
    return true;
  } catch {
    return false;
  }
}

function isLoopback(ip: string | undefined): boolean {
  const n = ip?.startsWith('::ffff:') ? ip.slice(7) : (ip ?? '');
  return n === '::1' || n.startsWith('127.');
}
