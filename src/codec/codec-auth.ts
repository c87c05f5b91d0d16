/**
 * Who may use the codec endpoint, and for what. Decrypted payloads hold identity data, so the
 * endpoint answers only callers it can authenticate; and since whoever can /encode can forge an
 * update or a signal our services would take as their own, encoding is a grant of its own, never
 * implied by decoding. The `Origin` header, which any script can set, only decides CORS and never
 * authorises.
 *
 * - `loopback` (development: no CODEC_AUTH_TOKEN, CODEC_ENCODE_TOKEN nor JWKS): callers on this machine
 *   only; they decode, and they encode only when the configuration says so (`encode`: config.ts
 *   grants it with CARD_ISSUING_DEVELOPMENT=true and the public development payload key, which
 *   encodes nothing a stranger could not encode already).
 * - `bearer`: `Authorization: Bearer <token>`, one of
 *   - the shared CODEC_AUTH_TOKEN (compared in constant time): decodes only;
 *   - the shared CODEC_ENCODE_TOKEN (likewise): encodes only;
 *   - the access token the Temporal UI forwards for its signed-in user (`codec.passAccessToken`),
 *     verified against the identity provider's keys (CODEC_JWKS_URL), for us (issuer, audience),
 *     expiring, naming its subject; it decodes when a role claim (CODEC_JWT_ROLES_CLAIM) holds
 *     CODEC_DECODE_ROLE and encodes when one holds CODEC_ENCODE_ROLE.
 *
 * Unauthenticated: 401. Authenticated without the operation's grant: 403 naming the missing role.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';

export type CodecOperation = 'decode' | 'encode';

export type CodecAuthConfig =
  | { mode: 'loopback'; /** Loopback callers may also /encode (explicit development only). */ encode?: boolean }
  | { mode: 'bearer'; token?: string; encodeToken?: string; jwks?: JwksConfig };

/**
 * The identity provider whose access tokens open history. Issuer and audience are required: without
 * them any token the provider signed (another application's ID token, from the same tenant) would do.
 * Being signed for us only authenticates: what the caller may do is in its role claims.
 */
export interface JwksConfig {
  url: string;
  issuer: string;
  audience: string;
  /** Claims that list the caller's roles or groups, first found first (CODEC_JWT_ROLES_CLAIM); default `roles`, `groups`. */
  roleClaims?: readonly string[];
  /** The role that lets a caller decode (CODEC_DECODE_ROLE). */
  decodeRole?: string;
  /** The role that lets a caller encode (CODEC_ENCODE_ROLE). */
  encodeRole?: string;
}

export const DEFAULT_ROLE_CLAIMS: readonly string[] = ['roles', 'groups'];
export const DEFAULT_DECODE_ROLE = 'card-issuing-codec-decode';
export const DEFAULT_ENCODE_ROLE = 'card-issuing-codec-encode';

/** Asymmetric algorithms only: a key set never authorises a token signed with a shared secret or none. */
const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** Clocks of the identity provider and ours may differ a little; a token past its exp by more is refused. */
const CLOCK_TOLERANCE_S = 30;

/**
 * Who is calling, as the audit log names them; never the credential itself. `anonymous`: no
 * credential we accept (a JWT that failed verification is not read: its claims are anyone's words).
 */
export type CodecCaller =
  | { kind: 'anonymous' | 'loopback' | 'shared-token' | 'encode-token' }
  /** `roles`: which of our two roles the token carries (the rest of its groups is none of our log's business). */
  | { kind: 'jwt'; sub: string; roles: string[] };

export type AuthVerdict =
  | { ok: true; caller: CodecCaller; may: CodecOperation[] }
  | { ok: false; status: 401 | 403; reason: string; caller: CodecCaller; may: CodecOperation[] };

export interface CodecAuthorizer {
  /**
   * Whether this request may perform `operation`; without one (a path that is neither /decode nor
   * /encode), whether the caller is authenticated at all. The verdict names the caller either way.
   */
  authorize(req: { remoteAddress?: string; authorization?: string; operation?: CodecOperation }): Promise<AuthVerdict>;
}

export function createCodecAuthorizer(config: CodecAuthConfig, keys?: JWTVerifyGetKey): CodecAuthorizer {
  if (config.mode === 'loopback') {
    const may: CodecOperation[] = config.encode ? ['decode', 'encode'] : ['decode'];
    return {
      authorize: async ({ remoteAddress, operation }) => {
        if (!isLoopback(remoteAddress)) return { ok: false, status: 403, reason: 'development mode answers loopback callers only', caller: { kind: 'anonymous' }, may: [] };
        return decide({ kind: 'loopback' }, may, operation, () => 'the encode role is required: in development mode /encode answers only with CARD_ISSUING_DEVELOPMENT=true and the development payload key');
      },
    };
  }
  const tokenDigest = config.token === undefined ? undefined : digest(config.token);
  const encodeTokenDigest = config.encodeToken === undefined ? undefined : digest(config.encodeToken);
  const jwks = config.jwks;
  const getKey = keys ?? (jwks ? createRemoteJWKSet(new URL(jwks.url)) : undefined);
  const roleClaims = jwks?.roleClaims ?? DEFAULT_ROLE_CLAIMS;
  const roleOf: Record<CodecOperation, string> = { decode: jwks?.decodeRole ?? DEFAULT_DECODE_ROLE, encode: jwks?.encodeRole ?? DEFAULT_ENCODE_ROLE };
  // A 403 names the role the operation needs, and what carries it here besides the caller's credential.
  const otherGrant = (op: CodecOperation) => {
    const grants = [...(op === 'decode' ? (tokenDigest ? ['CODEC_AUTH_TOKEN'] : []) : encodeTokenDigest ? ['CODEC_ENCODE_TOKEN'] : []), ...(jwks ? [`a token with the "${roleOf[op]}" role`] : [])];
    return grants.length ? `${op} needs ${grants.join(' or ')}` : `nobody here may ${op}`;
  };
  return {
    async authorize({ authorization, operation }) {
      const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
      if (!presented) return { ok: false, status: 401, reason: 'a bearer token is required', caller: { kind: 'anonymous' }, may: [] };
      const presentedDigest = digest(presented);
      if (tokenDigest && timingSafeEqual(presentedDigest, tokenDigest)) {
        return decide({ kind: 'shared-token' }, ['decode'], operation, (op) => `the ${op} role is required: the shared token may decode only (${otherGrant(op)})`);
      }
      if (encodeTokenDigest && timingSafeEqual(presentedDigest, encodeTokenDigest)) {
        return decide({ kind: 'encode-token' }, ['encode'], operation, (op) => `the ${op} role is required: the encode token may encode only (${otherGrant(op)})`);
      }
      const claims = getKey && jwks ? await verifiedClaims(presented, getKey, jwks) : undefined;
      if (!claims) return { ok: false, status: 401, reason: 'the bearer token is not accepted', caller: { kind: 'anonymous' }, may: [] };
      const held = rolesIn(claims, roleClaims);
      const may = (['decode', 'encode'] as const).filter((op) => held.has(roleOf[op]));
      const caller = { kind: 'jwt' as const, sub: claims.sub!, roles: may.map((op) => roleOf[op]) };
      return decide(caller, may, operation, (op) => `the "${roleOf[op]}" role is required to ${op}: this token's ${roleClaims.join(' or ')} claim ${caller.roles.length ? `holds only "${caller.roles.join('", "')}"` : 'holds none of our roles'}`);
    },
  };
}

function decide(caller: CodecCaller, may: CodecOperation[], operation: CodecOperation | undefined, missing: (op: CodecOperation) => string): AuthVerdict {
  if (operation === undefined || may.includes(operation)) return { ok: true, caller, may };
  return { ok: false, status: 403, reason: missing(operation), caller, may };
}

/** Equal-length digests, so the comparison takes the same time whatever the token's length. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * The claims of a token signed by the identity provider, for us (issuer and audience), expiring (a
 * token without exp never would) and naming its subject (the audit log's who); undefined otherwise.
 */
async function verifiedClaims(token: string, getKey: JWTVerifyGetKey, jwks: JwksConfig): Promise<JWTPayload | undefined> {
  try {
    const { payload } = await jwtVerify(token, getKey, {
      issuer: jwks.issuer,
      audience: jwks.audience,
      algorithms: JWT_ALGORITHMS,
      requiredClaims: ['exp', 'iss', 'aud', 'sub'],
      clockTolerance: CLOCK_TOLERANCE_S,
    });
    return typeof payload.sub === 'string' && payload.sub !== '' ? payload : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every role or group the token lists under any of `claimNames`: a claim is an array of strings or
 * one string. A name is looked up as is first (`https://example.com/roles`, as some providers
 * namespace custom claims), then as a dotted path into nested objects (`realm_access.roles`).
 */
function rolesIn(claims: JWTPayload, claimNames: readonly string[]): Set<string> {
  const roles = new Set<string>();
  for (const name of claimNames) {
    const value = own(claims, name) ?? name.split('.').reduce<unknown>((at, part) => own(at, part), claims);
    if (typeof value === 'string') roles.add(value);
    else if (Array.isArray(value)) for (const v of value) if (typeof v === 'string') roles.add(v);
  }
  return roles;
}

function own(value: unknown, name: string): unknown {
  return value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, name) ? (value as Record<string, unknown>)[name] : undefined;
}

function isLoopback(ip: string | undefined): boolean {
  const n = ip?.startsWith('::ffff:') ? ip.slice(7) : (ip ?? '');
  return n === '::1' || n.startsWith('127.');
}
