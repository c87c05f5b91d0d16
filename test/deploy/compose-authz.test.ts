/**
 * tools/compose-authz.ts, the development credentials of docker-compose.yml's `authz` profile: every
 * token verifies against the JWKS it writes (what Temporal's default JWT claim mapper checks: an ES256
 * signature under the key set's `kid`, an expiry), carries its process's grant in Temporal's format
 * (`permissions: ["<namespace>:<role>"]`) and its own subject; the server's certificate is for the
 * name the processes dial, issued by the CA they trust; the signing key is readable by its owner only.
 * Needs openssl (skipped and said so without it), no Temporal server.
 */
import { spawnSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { AUTHZ_FILES, AUTHZ_SERVER_HOST, GRANTS, writeAuthzSecrets, type AuthzProcess } from '../../tools/compose-authz';

const hasOpenssl = spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
if (!hasOpenssl) process.stderr.write('compose-authz: skipped, no openssl on PATH\n');

(hasOpenssl ? describe : describe.skip)('tools/compose-authz.ts: the authz profile\'s JWKS, tokens and TLS certificate', () => {
  let dir: string;
  const namespace = 'cards-test';
  beforeAll(async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'compose-authz-test-')), 'authz');
    await writeAuthzSecrets({ dir, namespace, days: 3 });
  });
  afterAll(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  test('each process has its own token, signed under the JWKS, with its grant and an expiry', async () => {
    const jwks = JSON.parse(readFileSync(join(dir, AUTHZ_FILES.jwks), 'utf8')) as JSONWebKeySet;
    // Public only: no private part of the key in the set the server (and anyone on the network) reads.
    expect(jwks.keys.map((k) => ({ kty: k.kty, alg: k.alg, hasKid: Boolean(k.kid), d: k.d }))).toEqual([{ kty: 'EC', alg: 'ES256', hasKid: true, d: undefined }]);
    const keySet = createLocalJWKSet(jwks);
    const subjects = new Set<string>();
    for (const proc of Object.keys(GRANTS) as AuthzProcess[]) {
      const token = readFileSync(join(dir, AUTHZ_FILES.token(proc)), 'utf8');
      const { payload, protectedHeader } = await jwtVerify(token, keySet, { algorithms: ['ES256'] });
      expect({ proc, kid: protectedHeader.kid, permissions: payload.permissions }).toEqual({ proc, kid: jwks.keys[0].kid, permissions: GRANTS[proc](namespace) });
      const days = (payload.exp! - payload.iat!) / 86400;
      expect({ proc, days }).toEqual({ proc, days: 3 });
      subjects.add(payload.sub!);
    }
    expect(subjects.size).toBe(Object.keys(GRANTS).length);
    // Temporal's default roles only; the processes that act need write (a poll needs it), the namespace job the system admin.
    expect(Object.fromEntries((Object.keys(GRANTS) as AuthzProcess[]).map((p) => [p, GRANTS[p](namespace)]))).toEqual({
      worker: [`${namespace}:write`], bridge: [`${namespace}:write`], service: [`${namespace}:write`], operator: [`${namespace}:write`], admin: ['temporal-system:admin'],
    });
  });

  test('a token signed by another key does not verify against the JWKS', async () => {
    const other = join(dir, '..', 'other');
    await writeAuthzSecrets({ dir: other, namespace, days: 1 });
    const jwks = createLocalJWKSet(JSON.parse(readFileSync(join(dir, AUTHZ_FILES.jwks), 'utf8')) as JSONWebKeySet);
    await expect(jwtVerify(readFileSync(join(other, AUTHZ_FILES.token('worker')), 'utf8'), jwks)).rejects.toThrow();
  });

  test("the server's certificate names the host the processes dial, is issued by the CA they trust and matches its key; the CA's key is not kept", () => {
    const ca = new X509Certificate(readFileSync(join(dir, AUTHZ_FILES.ca)));
    const server = new X509Certificate(readFileSync(join(dir, AUTHZ_FILES.serverCert)));
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca) && server.verify(ca.publicKey)).toBe(true);
    expect(server.subjectAltName).toBe(`DNS:${AUTHZ_SERVER_HOST}`);
    expect(server.checkHost(AUTHZ_SERVER_HOST)).toBe(AUTHZ_SERVER_HOST);
    expect(server.checkPrivateKey(createPrivateKey(readFileSync(join(dir, AUTHZ_FILES.serverKey))))).toBe(true);
    const expected = [AUTHZ_FILES.jwks, AUTHZ_FILES.signingKey, AUTHZ_FILES.ca, AUTHZ_FILES.serverCert, AUTHZ_FILES.serverKey, ...(Object.keys(GRANTS) as AuthzProcess[]).map(AUTHZ_FILES.token)];
    expect(readdirSync(dir).sort()).toEqual(expected.sort());
  });

  test('the folder is its owner\'s alone and the signing key readable by its owner only', () => {
    expect((statSync(dir).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(join(dir, AUTHZ_FILES.signingKey)).mode & 0o777).toString(8)).toBe('600');
  });
});
