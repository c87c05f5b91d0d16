/**
 * The development credentials of docker-compose.yml's `authz` profile (Temporal's own default
 * authorizer and JWT claim mapper, docs/security.md "Temporal's default authorizer in compose"),
 * written into one folder that the compose file mounts as secrets:
 *
 *   jwks.json                 the public key the server checks tokens with (served by `temporal-jwks`)
 *   token-<process>           one ES256 JWT per process, `permissions: ["<namespace>:<role>"]` (GRANTS)
 *   ca.pem                    the CA our processes trust for the server's TLS (a token is a bearer
 *                             secret: never sent in clear, and our processes turn TLS on with one)
 *   temporal-authz.pem, temporal-authz-key.pem   the server's certificate (DNS:temporal-authz) and key
 *   signing-key.jwk.json      the private signing key (0600): mounted nowhere; issue a token for
 *                             another service with it, or run this again
 *
 * Every run makes all of them anew (new keys, new tokens, valid --days): recreate the profile's
 * containers after it. The folder is 0700; the files the containers read are 0644 within it, since
 * Compose bind-mounts them as they are and the containers run as uid 1000, not as you. Needs
 * `openssl` for the certificates (as docker-compose.yml's header does for its keys).
 *
 *   npx tsx tools/compose-authz.ts [--dir .compose-secrets/authz] [--namespace card-issuing] [--days 30]
 */
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { stderrLine } from './cache';

/** Where docker-compose.yml looks unless COMPOSE_AUTHZ_DIR says otherwise (relative to the project). */
export const AUTHZ_DIR = '.compose-secrets/authz';
/** The server's name on the compose network, in its certificate. */
export const AUTHZ_SERVER_HOST = 'temporal-authz';

export type AuthzProcess = 'worker' | 'bridge' | 'service' | 'operator' | 'admin';

/**
 * Each process's grant under Temporal's default authorizer, whose namespace roles are read, write,
 * worker and admin, checked per API as `role >= the API's need` (go.temporal.io/server v1.31
 * common/authorization/default_authorizer.go): a poll needs write, so the `worker` role alone grants
 * nothing, and every process of ours that acts needs write. The role of tools/temporal-authz each
 * stands for is in the comment; what `write` lets each do beyond it is in docs/security.md.
 */
export const GRANTS: Record<AuthzProcess, (namespace: string) => string[]> = {
  worker: (ns) => [`${ns}:write`], // temporal-authz `worker`
  bridge: (ns) => [`${ns}:write`], // temporal-authz `bridge`: signals only, which write cannot say
  service: (ns) => [`${ns}:write`], // temporal-authz `service`: for a service outside compose
  operator: (ns) => [`${ns}:write`], // temporal-authz `operator`: the CLI, given to one command
  admin: () => ['temporal-system:admin'], // the one-shot namespace job (register it, search attributes)
};

export const AUTHZ_FILES = {
  jwks: 'jwks.json',
  signingKey: 'signing-key.jwk.json',
  ca: 'ca.pem',
  serverCert: 'temporal-authz.pem',
  serverKey: 'temporal-authz-key.pem',
  token: (proc: AuthzProcess) => `token-${proc}`,
} as const;

export interface AuthzOptions {
  dir: string;
  namespace: string;
  days: number;
}

/** Writes the folder's files (above); returns the tokens' subjects by process. */
export async function writeAuthzSecrets(opts: AuthzOptions): Promise<Record<AuthzProcess, string>> {
  if (!Number.isInteger(opts.days) || opts.days < 1) throw new Error(`--days must be a whole number of days, at least 1 (got ${opts.days})`);
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  chmodSync(opts.dir, 0o700);
  const put = (name: string, content: string, mode = 0o644) => {
    const path = join(opts.dir, name);
    writeFileSync(path, content, { mode });
    chmodSync(path, mode);
  };

  const kid = `compose-authz-${new Date().toISOString().slice(0, 10)}-${randomUUID().slice(0, 8)}`;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  put(AUTHZ_FILES.jwks, `${JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] }, null, 2)}\n`);
  put(AUTHZ_FILES.signingKey, `${JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'ES256' })}\n`, 0o600);

  const subjects = {} as Record<AuthzProcess, string>;
  for (const proc of Object.keys(GRANTS) as AuthzProcess[]) {
    subjects[proc] = `card-issuing-${proc}`;
    const token = await new SignJWT({ permissions: GRANTS[proc](opts.namespace) })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
      .setSubject(subjects[proc])
      .setIssuer('card-issuing compose authz (tools/compose-authz.ts)')
      .setIssuedAt()
      .setExpirationTime(`${opts.days}d`)
      .sign(privateKey);
    put(AUTHZ_FILES.token(proc), token);
  }

  writeCertificates(opts, put);
  return subjects;
}

/** A CA and the server's certificate under it, with openssl; the CA's key is thrown away. */
function writeCertificates(opts: AuthzOptions, put: (name: string, content: string, mode?: number) => void): void {
  const scratch = mkdtempSync(join(tmpdir(), 'compose-authz-'));
  const openssl = (...args: string[]) => {
    const res = spawnSync('openssl', args, { cwd: scratch, encoding: 'utf8' });
    if (res.error) throw new Error(`openssl is needed for the server's TLS certificate: ${res.error.message}`);
    if (res.status !== 0) throw new Error(`openssl ${args[0]} failed: ${res.stderr.trim().split('\n').pop()}`);
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    openssl('req', '-x509', ...ec, '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', String(opts.days), '-subj', '/CN=card-issuing compose authz CA');
    openssl('req', ...ec, '-keyout', 'server-key.pem', '-out', 'server.csr', '-subj', `/CN=${AUTHZ_SERVER_HOST}`);
    writeFileSync(join(scratch, 'server.ext'), `subjectAltName=DNS:${AUTHZ_SERVER_HOST}\nextendedKeyUsage=serverAuth\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n`);
    openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-set_serial', `0x${randomBytes(16).toString('hex')}`,
      '-days', String(opts.days), '-extfile', 'server.ext', '-out', 'server.pem');
    put(AUTHZ_FILES.ca, readFileSync(join(scratch, 'ca.pem'), 'utf8'));
    put(AUTHZ_FILES.serverCert, readFileSync(join(scratch, 'server.pem'), 'utf8'));
    put(AUTHZ_FILES.serverKey, readFileSync(join(scratch, 'server-key.pem'), 'utf8'));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function parseArgs(argv: string[]): AuthzOptions {
  const opts: AuthzOptions = { dir: AUTHZ_DIR, namespace: process.env.TEMPORAL_NAMESPACE || 'card-issuing', days: 30 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--dir') opts.dir = value;
    else if (flag === '--namespace') opts.namespace = value;
    else if (flag === '--days') opts.days = Number(value);
    else throw new Error(`unknown flag ${flag} (--dir, --namespace, --days)`);
  }
  return opts;
}

if (require.main === module) {
  (async () => {
    const opts = parseArgs(process.argv.slice(2));
    const subjects = await writeAuthzSecrets(opts);
    stderrLine(`wrote ${resolve(opts.dir)}: jwks.json, a token for each of ${Object.values(subjects).join(', ')} (namespace ${opts.namespace}, ${opts.days} days), the server's TLS certificate and its CA`);
    if (opts.dir !== AUTHZ_DIR) stderrLine(`compose reads ${AUTHZ_DIR} unless told: export COMPOSE_AUTHZ_DIR=${opts.dir}`);
  })().catch((err: Error) => {
    stderrLine(err.message);
    process.exit(1);
  });
}
