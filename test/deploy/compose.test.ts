/**
 * docker-compose.yml as Compose resolves it (issue 31: "`docker compose config` of the default file
 * runs reconciliation"): the real loader, `docker compose config --format json`, with only the
 * required variables set (random keys) and no .env file, so the file's own defaults are what is
 * checked. The workers run the schedules by default and alone get the PIN private key and the card
 * action trusted keys; the signal MAC key reaches the bridge and the workers only; the retired
 * payload keys reach every process that decrypts payloads; a missing required key refuses the file
 * and names it; no process holds a Temporal credential or speaks TLS to the file's own plaintext
 * server; the sandbox is built from the Dockerfile's `sandbox` stage, the rest from the default.
 * The `authz` profile (issue 50) runs the same cluster with Temporal's default authorizer and JWT claim
 * mapper, and gives each process its own token, mounted as a secret from the folder
 * tools/compose-authz.ts writes; the default and sandbox stacks are the same with or without it.
 * The loader is `docker compose` or `docker-compose` when installed, else tools/compose-config,
 * built once with Go by npm test's provisioning (tools/compose.ts); without it these tests are skipped and say so.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findCompose } from '../../tools/compose';
import { AUTHZ_DIR, AUTHZ_FILES, AUTHZ_SERVER_HOST } from '../../tools/compose-authz';

const ROOT = join(__dirname, '../..');
const FILE = join(ROOT, 'docker-compose.yml');
const compose = findCompose();
const why = 'no Compose loader: neither `docker compose` nor `docker-compose` is installed, and tools/compose-config is not built (npx tsx tools/compose.ts builds it with Go)';
if (!compose) process.stderr.write(`compose file: skipped, ${why}\n`);

interface Service {
  build?: { context: string; dockerfile: string; target?: string; args?: Record<string, string> };
  image?: string;
  environment?: Record<string, string | null>;
  command?: string[];
  profiles?: string[];
  secrets?: { source: string; target: string }[];
  depends_on?: Record<string, { condition: string }>;
  ports?: unknown[];
}
interface Project { services: Record<string, Service>; secrets?: Record<string, { file: string }>; 'x-app-env': Record<string, string> }

const key = () => randomBytes(32).toString('base64');
const REQUIRED = {
  PAYLOAD_CODEC_KEY: key(), CODEC_AUTH_TOKEN: key(), PIN_SEAL_PRIVATE_KEY: key(), PROVIDER_API_SECRET: `secret_${key()}`, PROVIDER_WEBHOOK_SECRET: `whsec_${key()}`, POSTGRES_PASSWORD: key(),
  SIGNAL_MAC_KEY: key(), CARD_ACTION_TRUSTED_KEYS: `ops:${key()}`,
};
const APP_SERVICES = ['worker', 'bridge', 'codec', 'sandbox'];

let scratch: string;
let emptyEnvFile: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'compose-test-'));
  emptyEnvFile = join(scratch, 'empty.env');
  writeFileSync(emptyEnvFile, '');
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * `docker compose -f docker-compose.yml [--profile sandbox] config --format json` in an environment
 * holding `vars` and nothing else of ours: the test run's own variables (SCHEDULES, keys, COMPOSE_*)
 * and a developer's .env must not decide what the file's defaults are.
 */
function config(vars: Record<string, string>, ...flags: string[]): { status: number | null; stderr: string; project?: Project } {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? scratch };
  for (const name of ['DOCKER_CONFIG', 'DOCKER_HOST', 'DOCKER_CONTEXT']) if (process.env[name]) env[name] = process.env[name]!;
  const res = spawnSync(
    compose!.file,
    [...compose!.args, '-f', FILE, '--project-directory', ROOT, '--env-file', emptyEnvFile, ...flags, 'config', '--format', 'json'],
    { env: { ...env, ...vars }, encoding: 'utf8', timeout: 60000 },
  );
  return { status: res.status, stderr: `${res.stderr}${res.error ? res.error.message : ''}`, project: res.status === 0 ? (JSON.parse(res.stdout) as Project) : undefined };
}

/** The resolved project, which must load. */
function resolved(vars: Record<string, string> = REQUIRED, ...flags: string[]): Project {
  const { status, stderr, project } = config(vars, ...flags);
  expect({ status, stderr }).toEqual({ status: 0, stderr: expect.any(String) });
  return project!;
}

const envOf = (project: Project, service: string) => project.services[service].environment ?? {};

/** The Dockerfile's stages by name, in order (`FROM image AS name`; an unnamed stage is ''). */
function dockerfileStages(): string[] {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  return [...dockerfile.matchAll(/^FROM\s+(?:--\S+\s+)*\S+(?:\s+AS\s+(\S+))?\s*$/gim)].map((m) => (m[1] ?? '').toLowerCase());
}

(compose ? describe : describe.skip)(`docker-compose.yml, as \`docker compose config\` resolves it${compose ? ` (${compose.what})` : `: SKIPPED, ${why}`}`, () => {
  test('the default file runs reconciliation: the workers have SCHEDULES=on and a RECONCILE_BUDGET_SHARE with no variable set', () => {
    const project = resolved();
    // `docker compose config` with no profile: the production services, no sandbox.
    expect(Object.keys(project.services)).toEqual(expect.arrayContaining(['worker', 'bridge', 'codec']));
    expect(project.services.sandbox).toBeUndefined();
    const worker = envOf(project, 'worker');
    expect(worker.SCHEDULES).toBe('on');
    expect(worker.RECONCILE_BUDGET_SHARE).toMatch(/^\d*\.?\d+$/);
    expect(Number(worker.RECONCILE_BUDGET_SHARE)).toBeGreaterThan(0);
    expect(Number(worker.RECONCILE_BUDGET_SHARE)).toBeLessThanOrEqual(1);
    // The worker's own environment is added to the shared one, not in place of it.
    expect({ keys: Object.keys(worker) }).toEqual({ keys: expect.arrayContaining(Object.keys(project['x-app-env'])) });
    expect(worker.PAYLOAD_CODEC_KEY).toBe(REQUIRED.PAYLOAD_CODEC_KEY);
    // Defaults, not fixed values: an operator turns reconciliation off or resizes its share with the variables.
    const off = envOf(resolved({ ...REQUIRED, SCHEDULES: 'off', RECONCILE_BUDGET_SHARE: '0.25' }), 'worker');
    expect([off.SCHEDULES, off.RECONCILE_BUDGET_SHARE]).toEqual(['off', '0.25']);
  });

  test("each process gets only the secrets it uses: the provider's API secret the worker (and the sandbox) alone, the webhook secret the bridge (and the sandbox), no provider secret or Temporal address the codec endpoint; Postgres no default password", () => {
    const project = resolved(REQUIRED, '--profile', 'sandbox');
    const secretValues = Object.entries(REQUIRED).filter(([name]) => name !== 'CODEC_AUTH_TOKEN' || true);
    const holds = (service: string) =>
      secretValues.filter(([, value]) => Object.values(envOf(project, service)).includes(value)).map(([name]) => name).sort();
    expect(holds('worker')).toEqual(['CARD_ACTION_TRUSTED_KEYS', 'PAYLOAD_CODEC_KEY', 'PIN_SEAL_PRIVATE_KEY', 'PROVIDER_API_SECRET', 'SIGNAL_MAC_KEY']);
    expect(holds('bridge')).toEqual(['PAYLOAD_CODEC_KEY', 'PROVIDER_WEBHOOK_SECRET', 'SIGNAL_MAC_KEY']);
    expect(holds('codec')).toEqual(['CODEC_AUTH_TOKEN', 'PAYLOAD_CODEC_KEY']);
    expect(holds('sandbox')).toEqual(['PROVIDER_API_SECRET', 'PROVIDER_WEBHOOK_SECRET']);
    expect(envOf(project, 'codec').TEMPORAL_ADDRESS).toBeUndefined();
    for (const service of ['postgresql', 'temporal-schema', 'temporal']) expect(JSON.stringify(envOf(project, service))).toContain(REQUIRED.POSTGRES_PASSWORD);
  });

  test('the PIN private key, its id and the retired PIN keys go to the workers and to no other service', () => {
    const project = resolved({ ...REQUIRED, PIN_SEAL_PREVIOUS_KEYS: `old:${key()}` }, '--profile', 'sandbox');
    const worker = envOf(project, 'worker');
    expect(worker.PIN_SEAL_PRIVATE_KEY).toBe(REQUIRED.PIN_SEAL_PRIVATE_KEY);
    expect(worker.PIN_SEAL_KEY_ID).toEqual(expect.any(String));
    expect(worker.PIN_SEAL_PREVIOUS_KEYS).toMatch(/^old:/);
    for (const [name, service] of Object.entries(project.services).filter(([name]) => name !== 'worker')) {
      expect({ name, sealVars: Object.keys(service.environment ?? {}).filter((v) => v.startsWith('PIN_SEAL')) }).toEqual({ name, sealVars: [] });
      expect({ name, hasKey: JSON.stringify(service).includes(REQUIRED.PIN_SEAL_PRIVATE_KEY) }).toEqual({ name, hasKey: false });
    }
    for (const name of ['bridge', 'codec', 'sandbox']) expect(project.services[name]).toBeDefined();
  });

  test('the retired payload keys (PAYLOAD_CODEC_PREVIOUS_KEYS) reach the worker, the bridge and the codec endpoint', () => {
    const previous = `old:${key()}`;
    const project = resolved({ ...REQUIRED, PAYLOAD_CODEC_PREVIOUS_KEYS: previous });
    for (const service of ['worker', 'bridge', 'codec']) {
      expect({ service, value: envOf(project, service).PAYLOAD_CODEC_PREVIOUS_KEYS }).toEqual({ service, value: previous });
    }
    // Unset, it is there and empty: no retired keys.
    const unset = resolved();
    for (const service of ['worker', 'bridge', 'codec']) expect({ service, value: envOf(unset, service).PAYLOAD_CODEC_PREVIOUS_KEYS }).toEqual({ service, value: '' });
  });

  test.each(Object.keys(REQUIRED))('without %s (unset or empty) the file is refused, naming it', (name) => {
    for (const vars of [Object.fromEntries(Object.entries(REQUIRED).filter(([k]) => k !== name)), { ...REQUIRED, [name]: '' }]) {
      for (const flags of [[], ['--profile', 'sandbox']]) {
        const { status, stderr, project } = config(vars, ...flags);
        expect({ flags, set: name in vars, status, project }).toEqual({ flags, set: name in vars, status: expect.any(Number), project: undefined });
        expect(status).not.toBe(0);
        // compose-go's `${VAR:?message}` error: "required variable NAME is missing a value: <the file's message>"
        expect(stderr).toMatch(new RegExp(`required variable ${name} is missing a value: set ${name}\\b`));
      }
    }
  });

  test('the signal MAC keys go to the bridge and the workers alone; the card action trusted keys to the workers alone; no service holds a card action signing key', () => {
    const previous = `old:${key()}`;
    const project = resolved({ ...REQUIRED, SIGNAL_MAC_PREVIOUS_KEYS: previous, SIGNAL_MAC_KEY_ID: '2026-11' }, '--profile', 'sandbox');
    for (const service of ['worker', 'bridge']) {
      expect({ service, env: envOf(project, service) }).toEqual({ service, env: expect.objectContaining({ SIGNAL_MAC_KEY: REQUIRED.SIGNAL_MAC_KEY, SIGNAL_MAC_KEY_ID: '2026-11', SIGNAL_MAC_PREVIOUS_KEYS: previous }) });
    }
    expect(envOf(project, 'worker').CARD_ACTION_TRUSTED_KEYS).toBe(REQUIRED.CARD_ACTION_TRUSTED_KEYS);
    // The bridge's env: the MAC key, but neither the trusted keys, the provider's API secret nor a PIN key.
    const bridge = envOf(project, 'bridge');
    for (const name of ['CARD_ACTION_TRUSTED_KEYS', 'PROVIDER_API_SECRET', 'PIN_SEAL_PRIVATE_KEY']) expect({ name, set: name in bridge }).toEqual({ name, set: false });
    for (const [name, service] of Object.entries(project.services)) {
      const vars = Object.keys(service.environment ?? {});
      const text = JSON.stringify(service);
      if (!['worker', 'bridge'].includes(name)) {
        expect({ name, mac: vars.filter((v) => v.startsWith('SIGNAL_MAC')), hasKey: text.includes(REQUIRED.SIGNAL_MAC_KEY) }).toEqual({ name, mac: [], hasKey: false });
      }
      if (name !== 'worker') expect({ name, trusted: vars.includes('CARD_ACTION_TRUSTED_KEYS'), hasKeys: text.includes(REQUIRED.CARD_ACTION_TRUSTED_KEYS) }).toEqual({ name, trusted: false, hasKeys: false });
      // The signing keys are the callers' own (the CLI's, given to one command): no service's environment.
      expect({ name, signing: vars.filter((v) => v === 'CARD_ACTION_SIGNING_KEY') }).toEqual({ name, signing: [] });
      // Nor does any process run in development, where the public defaults would stand in.
      expect({ name, development: vars.includes('CARD_ISSUING_DEVELOPMENT') }).toEqual({ name, development: false });
    }
  });

  test('the codec endpoint: CODEC_ENCODE_TOKEN only when the operator sets one, the role settings passed through', () => {
    const unset = envOf(resolved(), 'codec');
    expect(unset.CODEC_ENCODE_TOKEN ?? '').toBe('');
    for (const name of ['CODEC_JWT_ROLES_CLAIM', 'CODEC_DECODE_ROLE', 'CODEC_ENCODE_ROLE']) expect({ name, value: unset[name] ?? '' }).toEqual({ name, value: '' });
    const encodeToken = key();
    const project = resolved({ ...REQUIRED, CODEC_ENCODE_TOKEN: encodeToken, CODEC_JWT_ROLES_CLAIM: 'realm_access.roles', CODEC_DECODE_ROLE: 'ops-read', CODEC_ENCODE_ROLE: 'ops-write' });
    expect(envOf(project, 'codec')).toMatchObject({ CODEC_ENCODE_TOKEN: encodeToken, CODEC_JWT_ROLES_CLAIM: 'realm_access.roles', CODEC_DECODE_ROLE: 'ops-read', CODEC_ENCODE_ROLE: 'ops-write' });
    for (const service of ['worker', 'bridge']) expect({ service, has: JSON.stringify(project.services[service]).includes(encodeToken) }).toEqual({ service, has: false });
  });

  test("Temporal is the file's own plaintext server: no process holds a Temporal credential or turns TLS on", () => {
    const project = resolved({ ...REQUIRED, TEMPORAL_API_KEY: 'from-the-shell', TEMPORAL_TLS: 'true' }, '--profile', 'sandbox');
    for (const [name, service] of Object.entries(project.services)) {
      const vars = Object.keys(service.environment ?? {}).filter((v) => /^TEMPORAL_(API_KEY|TLS)/.test(v));
      expect({ name, vars }).toEqual({ name, vars: [] });
    }
    for (const service of ['worker', 'bridge']) expect({ service, address: envOf(project, service).TEMPORAL_ADDRESS }).toEqual({ service, address: 'temporal:7233' });
  });

  test('the workers are versioned by the build ID the image is built with (BUILD_ID), and no other service is', () => {
    const project = resolved(REQUIRED, '--profile', 'sandbox');
    expect(envOf(project, 'worker')).toMatchObject({ TEMPORAL_WORKER_BUILD_ID: 'dev', TEMPORAL_DEPLOYMENT_NAME: 'card-issuing' });
    // The bridge and the codec endpoint start no workers: a build ID there would mean nothing.
    for (const [name, service] of Object.entries(project.services).filter(([name]) => name !== 'worker')) {
      expect({ name, vars: Object.keys(service.environment ?? {}).filter((v) => /^TEMPORAL_(WORKER_BUILD_ID|DEPLOYMENT_)/.test(v)) }).toEqual({ name, vars: [] });
    }
    // One BUILD_ID for the image and the version its workers declare.
    const built = resolved({ ...REQUIRED, BUILD_ID: '2026.11.3', TEMPORAL_DEPLOYMENT_NAME: 'cards-eu' });
    expect(envOf(built, 'worker')).toMatchObject({ TEMPORAL_WORKER_BUILD_ID: '2026.11.3', TEMPORAL_DEPLOYMENT_NAME: 'cards-eu' });
    for (const name of ['worker', 'bridge', 'codec']) expect({ name, args: built.services[name].build?.args }).toEqual({ name, args: { BUILD_ID: '2026.11.3' } });
  });

  test('the Dockerfile bakes BUILD_ID into the runtime stage as the workers\' build ID and the image\'s version label', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.search(/^FROM\s+\S+\s+AS\s+runtime\s*$/im));
    expect(runtime).toMatch(/^ARG BUILD_ID=dev$/m);
    expect(runtime).toMatch(/^ENV TEMPORAL_WORKER_BUILD_ID=\$\{BUILD_ID\}$/m);
    expect(runtime).toMatch(/^LABEL org\.opencontainers\.image\.version="\$\{BUILD_ID\}"$/m);
    expect(dockerfileStages().at(-1)).toBe('runtime');
  });

  test("the sandbox builds the Dockerfile's `sandbox` target under its own image name; worker, bridge and codec the default target", () => {
    const project = resolved(REQUIRED, '--profile', 'sandbox');
    const { sandbox } = project.services;
    expect(sandbox.build).toEqual({ context: ROOT, dockerfile: 'Dockerfile', target: 'sandbox' });
    for (const name of ['worker', 'bridge', 'codec']) {
      expect({ name, build: project.services[name].build }).toEqual({ name, build: { context: ROOT, dockerfile: 'Dockerfile', args: { BUILD_ID: 'dev' } } });
      // One tag for two targets would leave whichever was built last under both names.
      expect({ name, image: project.services[name].image }).not.toEqual({ name, image: sandbox.image });
    }
    expect(Object.keys(project.services).filter((name) => project.services[name].build).sort()).toEqual([...APP_SERVICES].sort());
  });

  describe('the `authz` profile: Temporal\'s default authorizer and claim mapper, a token per process', () => {
    const AUTHZ_SERVICES = ['temporal-jwks', 'temporal-authz', 'temporal-namespace-authz', 'worker-authz', 'bridge-authz'];
    /** Each process of ours and the one token it mounts; the files' names are the generator's. */
    const TOKENS: Record<string, { secret: string; file: string }> = {
      'worker-authz': { secret: 'temporal-token-worker', file: AUTHZ_FILES.token('worker') },
      'bridge-authz': { secret: 'temporal-token-bridge', file: AUTHZ_FILES.token('bridge') },
      'temporal-namespace-authz': { secret: 'temporal-token-admin', file: AUTHZ_FILES.token('admin') },
    };
    const mounts = (project: Project, service: string) => (project.services[service].secrets ?? []).map((s) => s.source).sort();

    test('the server runs with the default authorizer and claim mapper, the keys of the JWKS the profile serves, TLS, and the internal frontend for its own workers; otherwise the default server', () => {
      const project = resolved(REQUIRED, '--profile', 'authz');
      const server = envOf(project, 'temporal-authz');
      expect(server).toMatchObject({
        TEMPORAL_AUTH_AUTHORIZER: 'default',
        TEMPORAL_AUTH_CLAIM_MAPPER: 'default',
        TEMPORAL_JWT_PERMISSIONS_CLAIM: 'permissions',
        USE_INTERNAL_FRONTEND: 'true',
        TEMPORAL_TLS_FRONTEND_CERT: '/run/secrets/temporal-server-cert',
        TEMPORAL_TLS_FRONTEND_KEY: '/run/secrets/temporal-server-key',
      });
      // The image's start command runs only the services TEMPORAL_SERVICES names: the internal frontend too.
      expect(server.TEMPORAL_SERVICES!.split(',').sort()).toEqual(['frontend', 'history', 'internal-frontend', 'matching', 'worker']);
      expect(mounts(project, 'temporal-authz')).toEqual(['temporal-server-cert', 'temporal-server-key']);
      // Same image, databases and dynamic config as the default server: the same cluster, with authorization.
      expect({ image: project.services['temporal-authz'].image, env: server }).toEqual({ image: project.services.temporal.image, env: expect.objectContaining(envOf(project, 'temporal')) });
      // The key set: served by a service of the profile from the generator's jwks.json, and by nothing else.
      const jwks = new URL(server.TEMPORAL_JWT_KEY_SOURCE1!);
      expect({ host: jwks.hostname, path: jwks.pathname }).toEqual({ host: 'temporal-jwks', path: '/jwks.json' });
      expect(mounts(project, 'temporal-jwks')).toEqual(['temporal-jwks']);
      expect(project.services['temporal-jwks'].command!.join(' ')).toContain(`.listen(${jwks.port}`);
      expect(project.secrets!['temporal-jwks'].file).toBe(join(ROOT, AUTHZ_DIR, AUTHZ_FILES.jwks));
      expect(project.secrets!['temporal-server-cert'].file).toBe(join(ROOT, AUTHZ_DIR, AUTHZ_FILES.serverCert));
      expect(project.secrets!['temporal-server-key'].file).toBe(join(ROOT, AUTHZ_DIR, AUTHZ_FILES.serverKey));
      for (const name of AUTHZ_SERVICES) expect({ name, profiles: project.services[name].profiles }).toEqual({ name, profiles: ['authz'] });
    });

    test('each process gets its own token, read from its own secret, and reaches the server by the name its certificate carries', () => {
      const dir = join(scratch, 'authz');
      const project = resolved({ ...REQUIRED, COMPOSE_AUTHZ_DIR: dir }, '--profile', 'authz');
      const files = Object.values(TOKENS).map(({ secret }) => project.secrets![secret].file);
      expect(new Set(files).size).toBe(files.length);
      for (const [service, { secret, file }] of Object.entries(TOKENS)) {
        expect({ service, file: project.secrets![secret].file }).toEqual({ service, file: join(dir, file) });
        // Its token and the server's CA; no other process's token, no signing key, no server key.
        expect({ service, mounts: mounts(project, service) }).toEqual({ service, mounts: [secret, 'temporal-ca'].sort() });
        expect({ service, reads: project.services[service].command!.join(' ').match(/\/run\/secrets\/temporal-token-\w+/g) }).toEqual({ service, reads: expect.arrayContaining([`/run/secrets/${secret}`]) });
        expect({ service, others: project.services[service].command!.join(' ').match(/temporal-token-\w+/g)!.filter((s) => s !== secret) }).toEqual({ service, others: [] });
      }
      for (const service of ['worker-authz', 'bridge-authz']) {
        const env = envOf(project, service);
        expect({ service, address: env.TEMPORAL_ADDRESS, ca: env.TEMPORAL_TLS_CA_PATH }).toEqual({ service, address: `${AUTHZ_SERVER_HOST}:7233`, ca: '/run/secrets/temporal-ca' });
        // The token is read at start, so it is in no container's environment (docker inspect).
        expect({ service, apiKey: 'TEMPORAL_API_KEY' in env }).toEqual({ service, apiKey: false });
        expect({ service, dependsOn: Object.keys(project.services[service].depends_on ?? {}) }).toEqual({ service, dependsOn: ['temporal-namespace-authz'] });
      }
      expect(project.secrets!['temporal-ca'].file).toBe(join(dir, AUTHZ_FILES.ca));
      // Otherwise the same worker and bridge: their own settings and secrets, and the image's commands.
      const { TEMPORAL_ADDRESS: _w, TEMPORAL_TLS_CA_PATH: _wc, ...worker } = envOf(project, 'worker-authz');
      const { TEMPORAL_ADDRESS: _b, TEMPORAL_TLS_CA_PATH: _bc, ...bridge } = envOf(project, 'bridge-authz');
      const { TEMPORAL_ADDRESS: _dw, ...plainWorker } = envOf(project, 'worker');
      const { TEMPORAL_ADDRESS: _db, ...plainBridge } = envOf(project, 'bridge');
      expect(worker).toEqual(plainWorker);
      expect(bridge).toEqual(plainBridge);
      expect(project.services['worker-authz'].command!.at(-1)).toMatch(/exec node dist\/worker\.js$/);
      expect(project.services['bridge-authz'].command!.at(-1)).toMatch(/exec node dist\/bridge\/server\.js$/);
      // The operator's and a service's tokens and the signing key are mounted nowhere; the codec endpoint gets no Temporal credential.
      const mounted = Object.values(project.secrets!).map((s) => s.file);
      for (const name of [AUTHZ_FILES.token('operator'), AUTHZ_FILES.token('service'), AUTHZ_FILES.signingKey]) expect(mounted).not.toContain(join(dir, name));
      expect({ secrets: project.services.codec.secrets, address: envOf(project, 'codec').TEMPORAL_ADDRESS }).toEqual({ secrets: undefined, address: undefined });
    });

    test('nothing in the default or sandbox stack changes: with the profile they resolve the same, and without it none of its services, secrets or settings are there', () => {
      for (const flags of [[], ['--profile', 'sandbox']]) {
        const plain = resolved(REQUIRED, ...flags);
        const withAuthz = resolved(REQUIRED, ...flags, '--profile', 'authz');
        expect(Object.keys(withAuthz.services).filter((name) => !AUTHZ_SERVICES.includes(name)).sort()).toEqual(Object.keys(plain.services).sort());
        for (const [name, service] of Object.entries(plain.services)) expect({ name, service: withAuthz.services[name] }).toEqual({ name, service });
        expect({ flags, secrets: plain.secrets, authz: AUTHZ_SERVICES.filter((name) => name in plain.services) }).toEqual({ flags, secrets: undefined, authz: [] });
        for (const [name, service] of Object.entries(plain.services)) {
          // (The UI's TEMPORAL_AUTH_* are its own OIDC login, not the server's authorizer.)
          const vars = Object.keys(service.environment ?? {}).filter((v) => /^(TEMPORAL_(AUTH_(AUTHORIZER|CLAIM_MAPPER)|JWT_|API_KEY|TLS|SERVICES)|USE_INTERNAL_FRONTEND)/.test(v));
          expect({ name, vars, secrets: service.secrets }).toEqual({ name, vars: [], secrets: undefined });
        }
      }
    });
  });

  test('the Dockerfile has the `sandbox` stage, and it is not the last one (the default target the other services build)', () => {
    const stages = dockerfileStages();
    expect(stages).toContain('sandbox');
    expect(stages[stages.length - 1]).not.toBe('sandbox');
  });
});
