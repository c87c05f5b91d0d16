/**
 * A real consumer of @card-issuing/client (issue 30): the package is built and packed, and
 * examples/fund-service, copied to a directory of its own outside this repository, installs the
 * tarball and runs with plain `node` against a local stack. Its POST /cards/:id/fund, sent twice
 * and twice at once under one Idempotency-Key, moves the money once (the sandbox's ledger is the
 * truth); without the header it is refused 400; the key with another amount answers 409.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { issueTestCard } from '../helpers/flows';
import { startStack, uniqueId, type Stack } from '../helpers/stack';
import { PACKAGE_DIR, REPO_ROOT, npm, withPackageBuildLock, type Run } from './client-package';

jest.setTimeout(240_000);

const EXAMPLE_DIR = join(REPO_ROOT, 'examples/fund-service');
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund'];

/**
 * Whether npm can install the package's dependencies here: from its cache (as on CI with the root's
 * dependencies installed), or else from the registry. Decided before the tests are declared, so a
 * machine that can do neither skips them by name instead of failing for want of a network.
 */
function installProbe(): { ok: true; from: string } | { ok: false; why: string } {
  const deps = Object.entries<string>(JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')).dependencies).map(([n, v]) => `${n}@${v}`);
  const dir = mkdtempSync(join(tmpdir(), 'card-issuing-probe-'));
  try {
    writeFileSync(join(dir, 'package.json'), '{"name":"probe","private":true}');
    const offline = spawnSync('npm', ['install', '--dry-run', '--offline', '--ignore-scripts', '--no-save', '--no-audit', '--no-fund', ...deps], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    if (offline.status === 0) return { ok: true, from: 'the npm cache' };
    const ping = spawnSync('npm', ['ping'], { cwd: dir, encoding: 'utf8', timeout: 20_000 });
    if (ping.status === 0) return { ok: true, from: 'the registry (the npm cache lacks some dependencies)' };
    const firstLine = (text: string) => text.split('\n').find((l) => l.trim()) ?? '';
    return { ok: false, why: `the npm cache lacks its dependencies (${deps.join(', ')}) and the registry is unreachable (${firstLine(offline.stderr)}; ${firstLine(ping.stderr)})` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const probe = installProbe();
if (!probe.ok) console.warn(`SKIPPED test/client/consumer.test.ts: the packed @card-issuing/client cannot be installed on this machine: ${probe.why}`);
const describeIfInstallable = probe.ok ? describe : describe.skip;

describeIfInstallable('examples/fund-service, installed from the packed @card-issuing/client', () => {
  let work: string;
  let serviceDir: string;
  let stack: Stack;
  let service: RunningService;
  let cardId: string;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    work = realpathSync(mkdtempSync(join(tmpdir(), 'fund-service-')));
    serviceDir = join(work, 'service');
    const tarball = await withPackageBuildLock(async () => {
      const build = await must(npm(['run', 'build:client']), 'npm run build:client');
      timings.buildMs = build.ms;
      const pack = await must(npm(['pack', PACKAGE_DIR, '--pack-destination', work, '--json']), 'npm pack');
      timings.packMs = pack.ms;
      return join(work, (JSON.parse(pack.stdout) as Array<{ filename: string }>)[0].filename);
    });
    cpSync(EXAMPLE_DIR, serviceDir, { recursive: true, filter: (src) => !src.split(sep).includes('node_modules') });
    const manifest = JSON.parse(readFileSync(join(serviceDir, 'package.json'), 'utf8'));
    manifest.dependencies['@card-issuing/client'] = `file:${tarball}`;
    writeFileSync(join(serviceDir, 'package.json'), JSON.stringify(manifest, null, 2));
    timings.installMs = (await must(npm(['install', ...INSTALL_FLAGS], serviceDir), `npm install ${INSTALL_FLAGS.join(' ')} (from ${probe.ok && probe.from})`)).ms;

    stack = await startStack();
    cardId = (await issueTestCard(stack, 1000)).cardId;
    service = await startService(serviceDir, {
      TEMPORAL_ADDRESS: stack.config.temporal.address,
      TEMPORAL_TASK_QUEUE: stack.taskQueue,
      PAYLOAD_CODEC_KEY: stack.config.codec.key,
      PAYLOAD_CODEC_KEY_ID: stack.config.codec.keyId,
      PORT: '0',
    });
    console.info(`fund-service from the tarball: build ${timings.buildMs} ms, pack ${timings.packMs} ms, npm install ${timings.installMs} ms (dependencies from ${probe.ok && probe.from})`);
  });

  afterAll(async () => {
    await service?.stop();
    await stack?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const fund = (amount: unknown, idempotencyKey?: string) =>
    fetch(`${service.url}/cards/${cardId}/fund`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      body: JSON.stringify({ amount }),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
  const balance = async () => (await stack.control<{ cards: Array<{ cardId: string; availableBalance: number }> }>('GET', '/ledger')).cards.find((c) => c.cardId === cardId)?.availableBalance;

  test('the service loads the package from its own node_modules, not from this repository', () => {
    expect(serviceDir.startsWith(REPO_ROOT + sep)).toBe(false);
    const entry = realpathSync(require.resolve('@card-issuing/client', { paths: [serviceDir] }));
    expect(entry).toBe(join(serviceDir, 'node_modules/@card-issuing/client/dist/client/index.js'));
    // And the package's own dependencies come from there too (a tarball install copies; nothing links back).
    expect(realpathSync(require.resolve('@temporalio/client', { paths: [dirname(entry)] })).startsWith(join(serviceDir, 'node_modules') + sep)).toBe(true);
    expect(service.output()).toContain('"msg":"listening"');
  });

  test('@card-issuing/client/nexus is the Nexus contract alone: what a caller\'s workflow imports loads no Temporal client or gRPC', () => {
    const script = `const m = require('@card-issuing/client/nexus'); const loaded = Object.keys(require.cache); console.log(JSON.stringify({ name: m.cardIssuingService.name, operations: Object.keys(m.cardIssuingService.operations).sort(), heavy: loaded.filter((f) => /@temporalio[\\/]client|@grpc/.test(f)) }))`;
    const run = spawnSync(process.execPath, ['-e', script], { cwd: serviceDir, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ name: 'cardIssuing', operations: ['cardState', 'fundCard', 'issueCard', 'onboardCardholder', 'onboarding', 'purchaseEsim', 'rechargeEsim', 'sendPayout', 'walletBalance', 'withdrawFromCard'], heavy: [] });
  });

  test('a request without Idempotency-Key is refused 400 naming the header; an invalid amount 422 with its field error; neither moves anything', async () => {
    const refused = await fund(100);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('Idempotency-Key');
    const invalid = await fund('lots', uniqueId('order').slice(0, 40));
    expect(invalid).toMatchObject({ status: 422, body: { error: 'ValidationFailed', fieldErrors: { amount: expect.any(String) } } });
    expect(await balance()).toBe(1000);
  });

  test('the same request sent twice, and twice at once, under one key moves the money once', async () => {
    const key = uniqueId('order').slice(0, 40);
    const first = await fund(300, key);
    expect(first).toMatchObject({ status: 200, body: { updateId: expect.any(String) } });
    expect(await fund(300, key)).toEqual(first);
    expect(await balance()).toBe(1300);

    const racing = uniqueId('race').slice(0, 40);
    const [one, other] = await Promise.all([fund(200, racing), fund(200, racing)]);
    expect(one).toMatchObject({ status: 200 });
    expect(other).toEqual(one);
    expect(await balance()).toBe(1500);
  });

  test('the same key with another amount answers 409 IdempotencyConflict and moves nothing', async () => {
    const key = uniqueId('order').slice(0, 40);
    expect(await fund(400, key)).toMatchObject({ status: 200 });
    const before = await balance();
    const conflict = await fund(450, key);
    expect(conflict).toMatchObject({ status: 409, body: { error: 'IdempotencyConflict', idempotencyKey: key, mayHaveTakenEffect: false } });
    expect(await balance()).toBe(before);
  });
});

async function must(run: Promise<Run>, what: string): Promise<Run> {
  const done = await run;
  if (done.code !== 0) throw new Error(`${what} failed (exit ${done.code}):\n${done.output}`);
  return done;
}

interface RunningService {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** `node src/server.js` in the service's directory, with only the environment it is given; resolves once it listens. */
function startService(dir: string, env: Record<string, string>): Promise<RunningService> {
  const child: ChildProcess = spawn(process.execPath, ['src/server.js'], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('fund-service did not listen within 30 s')), 30_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${err.message}\n${output}`));
    };
    const early = (code: number | null) => fail(new Error(`fund-service exited (${code}) before listening`));
    child.once('exit', early);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /\{"msg":"listening","port":(\d+)/.exec(output);
      if (!listening) return;
      clearTimeout(timer);
      child.off('exit', early);
      resolve({
        url: `http://127.0.0.1:${listening[1]}`,
        output: () => output,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}
