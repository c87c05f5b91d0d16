/**
 * The image as it ships, proven without a container engine (issue 31): what the Dockerfile's
 * runtime stage holds, run with plain `node`.
 *
 *   npm run dist-check                          # on this machine's node
 *   npm run dist-check -- --node /path/to/node  # and/or another binary (repeatable)
 *   npm run dist-check -- --node24              # Node 24 from the npm registry's `node` package
 *
 * 1. compiles with tsconfig.build.json into a fresh directory outside the clone (so nothing can
 *    be resolved from the clone's node_modules), and checks the provider sandbox is not in it;
 * 2. installs production dependencies only there (`npm ci --omit=dev`, as the Dockerfile does)
 *    and builds the workflow bundle with them;
 * 3. per node binary: starts the worker, the bridge and the codec endpoint from dist/, each under
 *    a hook that records every module file it loaded, against a Temporal server and the sandbox
 *    (both run by this tool, as the provider and the cluster would be); runs one flow of each
 *    kind (tools/flows.ts, the demo's) through the typed client, the CLI as the image runs it
 *    (`node dist/starter/cli.js`), and an encode and a decode through the codec endpoint, each with
 *    its own grant (CODEC_ENCODE_TOKEN, CODEC_AUTH_TOKEN); stops them, and fails
 *    when a process loaded a file from outside the install (a development dependency, the
 *    clone) or a flow did not end as expected, or the sandbox's ledger does not balance.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTemporalCli } from './temporal-cli';
import { startDevServer, type DevServer } from './dev-server';
import { cacheRoot, stderrLine } from './cache';
import { DEMO_FLOWS, cleanUpFlowRun, flowTable, ledgerVerdict, runFlows, type FlowRun } from './flows';
import { startDistProcess, type DistProcess } from './dist-process';
import { newPinKeyPair } from '../src/codec/card-secrets';
import { newCardActionKeyPair } from '../src/codec/card-capability';
import { loadConfig } from '../src/config';
import { startSandbox } from '../src/sandbox';
import { SandboxControlClient } from '../src/sandbox/control-client';
import { documentsRoot } from '../src/sandbox/kyc-samples';
import { createCardIssuingClient } from '../src/starter/connect';
import { freePort } from '../src/ports';

const ROOT = join(__dirname, '..');

export interface BuiltImage {
  /** The install: dist/, node_modules (production only), package.json. */
  dir: string;
  remove(): void;
}

/** Steps 1 and 2: the runtime stage's contents, in a fresh directory. */
export function buildImageDir(log: (line: string) => void = stderrLine, node = process.execPath): BuiltImage {
  const dir = mkdtempSync(join(tmpdir(), 'card-issuing-dist-'));
  const run = (cmd: string, args: string[], cwd = dir) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  log(`compiling with tsconfig.build.json into ${dir}/dist`);
  run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')], ROOT);
  if (existsSync(join(dir, 'dist/sandbox'))) throw new Error('the production build holds the provider sandbox (dist/sandbox): tsconfig.build.json must exclude src/sandbox');
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(ROOT, file), join(dir, file));
  log('installing production dependencies only (npm ci --omit=dev)');
  run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline']);
  log('building the workflow bundle with them');
  run(node, ['dist/fleet/bundle.js', 'dist/workflow-bundle.js']);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface DistRunResult {
  ok: boolean;
  lines: string[];
}

/**
 * Step 3 on one node binary, against a Temporal dev server of its own: the worker applies the
 * reconciliation schedules (SCHEDULES=on), whose IDs are fixed per namespace, so a shared server
 * would see two runs (or a run and another test) rewrite each other's.
 */
export async function runImage(image: BuiltImage, node: string, opts: { log?: (line: string) => void } = {}): Promise<DistRunResult> {
  const log = opts.log ?? stderrLine;
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    log(line);
  };
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  say(`node ${version} (${node})`);
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const server: DevServer = await startDevServer({ cliPath: await ensureTemporalCli(undefined, log), port: 0, headless: true });
    stops.push(() => server.stop());
    const sandbox = await startSandbox({ port: 0 });
    stops.push(() => sandbox.close());
    const ports = { bridge: await freePort(), codec: await freePort(), workerOps: await freePort(), bridgeOps: await freePort() };
    const control = new SandboxControlClient(sandbox.url);
    await control.configure({ webhookUrl: `http://127.0.0.1:${ports.bridge}/webhooks/provider`, cardProvisioningMs: 100, kycReviewMs: 300 });
    const env = {
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_TASK_QUEUE: `dist-check-${randomUUID().slice(0, 8)}`,
      PROVIDER_BASE_URL: sandbox.url,
      PAYLOAD_CODEC_KEY: randomBytes(32).toString('base64'),
      PAYLOAD_CODEC_KEY_ID: 'dist',
      // The image runs as in production: every secret given, none taken from a development default (here the sandbox's own).
      PROVIDER_API_SECRET: loadConfig({}).provider.apiSecret,
      // The flows write their documents where this process's configuration says; the worker runs in another folder.
      KYC_DOCUMENTS_DIR: documentsRoot(),
      LOG_LEVEL: 'warn',
    };
    const sealKey = { PIN_SEAL_PRIVATE_KEY: newPinKeyPair().privateKey, PIN_SEAL_KEY_ID: 'dist' };
    // Issue 50's keys, as the chart gives them: the signal MAC key to the bridge and the worker, the
    // card action public key to the worker, its signing half to the typed client only.
    const signalMac = { SIGNAL_MAC_KEY: randomBytes(32).toString('base64'), SIGNAL_MAC_KEY_ID: 'dist' };
    const cardActionKeys = newCardActionKeyPair();
    const trusted = { CARD_ACTION_TRUSTED_KEYS: `dist:${cardActionKeys.publicKey}` };
    const signing = { CARD_ACTION_SIGNING_KEY: cardActionKeys.privateKey, CARD_ACTION_KEY_ID: 'dist' };
    // The codec endpoint's two grants: CODEC_AUTH_TOKEN decodes only, CODEC_ENCODE_TOKEN encodes only.
    const codecTokens = { decode: randomBytes(24).toString('base64'), encode: randomBytes(24).toString('base64') };
    const processes: DistProcess[] = [
      // Its /ready answers before the workers poll: ready once it says it polls (after the schedules were applied).
      startDistProcess(image.dir, node, 'worker', 'dist/worker.js', { ...env, ...sealKey, ...signalMac, ...trusted, LOG_LEVEL: 'info', SCHEDULES: 'on', WORKFLOW_BUNDLE_PATH: join(image.dir, 'dist/workflow-bundle.js'), METRICS_PORT: String(ports.workerOps) }, `http://127.0.0.1:${ports.workerOps}/ready`, '"msg":"polling"'),
      startDistProcess(image.dir, node, 'bridge', 'dist/bridge/server.js', { ...env, ...signalMac, BRIDGE_PORT: String(ports.bridge), METRICS_PORT: String(ports.bridgeOps) }, `http://127.0.0.1:${ports.bridgeOps}/ready`),
      startDistProcess(image.dir, node, 'codec endpoint', 'dist/codec-endpoint.js', { ...env, CODEC_SERVER_PORT: String(ports.codec), CODEC_AUTH_TOKEN: codecTokens.decode, CODEC_ENCODE_TOKEN: codecTokens.encode }, `http://127.0.0.1:${ports.codec}/health`),
    ];
    stops.push(async () => Promise.all(processes.map((p) => p.stop())));
    await Promise.all(processes.map((p) => p.ready()));
    say('worker, bridge and codec endpoint up from dist/ with production dependencies only');
    // A process that dies mid-run fails the check at once, instead of leaving flows to wait for it.
    const crash = Promise.race(processes.map((p) => p.died()));
    crash.catch(() => undefined); // told through unlessCrashed; a death after the last check shows in stoppedCleanly
    const unlessCrashed = <T>(work: Promise<T>): Promise<T> => Promise.race([work, crash]);

    const config = loadConfig({ ...env, ...sealKey, ...signing });
    const client = await createCardIssuingClient(config);
    const run: FlowRun = { client, control, timings: { webhookWaitMs: 2000, pollInitialIntervalMs: 250, pollMaxIntervalMs: 1000, deadlineMs: 60_000 }, tag: 'Dist', log: () => undefined, awaitResult: (r) => r(), made: {} };
    let flowsOk = false;
    try {
      const rows = await unlessCrashed(runFlows(DEMO_FLOWS, run));
      say(flowTable(rows));
      flowsOk = rows.every((r) => r.ok);
    } finally {
      cleanUpFlowRun(run);
      await client.close();
    }
    const cli = await unlessCrashed(cliChecks(image.dir, node, { ...env, ...sealKey }, run.made.cardId));
    cli.forEach((c) => say(`cli ${c.line}: ${c.ok ? 'ok' : `FAILED (${c.why})`}`));
    const decoded = await unlessCrashed(decodeThrough(ports.codec, codecTokens, config.codec));
    say(`codec endpoint encode and decode, each with its own token: ${decoded ? 'ok' : 'FAILED'}`);
    const ledger = await ledgerVerdict(control);
    say(ledger.line);

    await Promise.all(processes.map((p) => p.stop()));
    const strays = processes.flatMap((p) => p.loadedOutside().map((file) => `${p.name}: ${file}`));
    say(strays.length === 0 ? 'every module loaded came from the install (no development dependency, nothing from the clone)' : `loaded from outside the install:\n  ${strays.join('\n  ')}`);
    const crashed = processes.filter((p) => !p.stoppedCleanly());
    crashed.forEach((p) => say(`${p.name} did not stop cleanly: ${p.tail()}`));
    return { ok: flowsOk && cli.every((c) => c.ok) && decoded && ledger.ok && strays.length === 0 && crashed.length === 0, lines };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

/**
 * The CLI as operators run it in the image; each line's JSON is checked, not only its exit code.
 * Asynchronous on purpose: the sandbox answers from this process, so a synchronous spawn would
 * leave the worker's provider calls unanswered until the CLI gave up.
 */
async function cliChecks(dir: string, node: string, env: Record<string, string>, cardId: string | undefined): Promise<Array<{ line: string; ok: boolean; why?: string }>> {
  const checks: Array<{ args: string[]; expect: (json: Record<string, any>) => boolean }> = [
    { args: ['schedules', 'list', '--json'], expect: (j) => j.ok === true && JSON.stringify(j.result).includes('reconcile-money') },
    { args: ['wallet', '--json'], expect: (j) => j.ok === true && typeof j.result?.availableBalance === 'number' },
    ...(cardId ? [{ args: ['card', cardId, '--json'], expect: (j: Record<string, any>) => j.ok === true && j.result?.cardId === cardId }] : []),
    { args: ['fund', '--json'], expect: (j) => j.ok === false && j.error?.type === 'UsageError' },
  ];
  const results: Array<{ line: string; ok: boolean; why?: string }> = [];
  for (const { args, expect } of checks) {
    const res = await runNode(node, ['dist/starter/cli.js', ...args], dir, { PATH: process.env.PATH ?? '', ...env });
    let json: Record<string, any> | undefined;
    try {
      json = JSON.parse(res.stdout);
    } catch {
      json = undefined;
    }
    const ok = json !== undefined && expect(json);
    results.push({ line: `node dist/starter/cli.js ${args.join(' ')} (exit ${res.status})`, ok, ...(ok ? {} : { why: `${res.stdout}${res.stderr}`.trim().slice(0, 400) }) });
  }
  return results;
}

function runNode(node: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(node, args, { cwd, env, timeout: 90_000 }, (err, stdout, stderr) => resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

/**
 * One payload through the codec endpoint's /encode and /decode, as the UI calls them, each with the
 * bearer token of its grant; and neither token may do the other's operation (403).
 */
async function decodeThrough(port: number, tokens: { decode: string; encode: string }, keys: { keyId: string }): Promise<boolean> {
  const data = Buffer.from(JSON.stringify({ check: 'dist' })).toString('base64');
  const payloads = [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data }];
  const post = (path: string, token: string, body: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-namespace': 'default' }, body: JSON.stringify(body) });
  const call = (path: string, token: string, body: unknown) => post(path, token, body).then((r) => (r.ok ? r.json() : undefined));
  const encoded = (await call('/encode', tokens.encode, { payloads })) as { payloads: Array<{ metadata: Record<string, string> }> } | undefined;
  if (!encoded || Buffer.from(encoded.payloads[0].metadata['encryption-key-id'] ?? '', 'base64').toString() !== keys.keyId) return false;
  const decoded = (await call('/decode', tokens.decode, encoded)) as { payloads: unknown[] } | undefined;
  if (JSON.stringify(decoded?.payloads) !== JSON.stringify(payloads)) return false;
  const refused = await Promise.all([post('/encode', tokens.decode, { payloads }), post('/decode', tokens.encode, encoded)]);
  return refused.every((r) => r.status === 403);
}

/**
 * The Node 24 binary of the npm registry's `node` package, installed once into the cache outside
 * the clone (`npm install --prefix`; the package's preinstall fetches the platform's binary);
 * undefined when it cannot be had. (`npm exec -p node@24 -- node …` runs it too, but its shim
 * passes the command name on as a script, so the path is taken from the install instead.)
 */
export function node24(): string | undefined {
  const prefix = join(cacheRoot(), 'node24');
  const binary = join(prefix, 'node_modules/node/bin/node');
  const isV24 = () => existsSync(binary) && /^v24\./.test(spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout ?? '');
  if (isV24()) return binary;
  spawnSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', 'node@24'], { stdio: 'ignore', timeout: 300_000 });
  return isV24() ? binary : undefined;
}

function nodesFromArgs(argv: string[]): string[] {
  const nodes: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--node') nodes.push(argv[++i]);
    else if (argv[i] === '--node24') {
      const found = node24();
      if (!found) throw new Error('--node24: npm install node@24 gave no Node 24 binary (is the npm registry reachable?)');
      nodes.push(found);
    } else throw new Error(`unknown argument ${argv[i]} (--node PATH, --node24)`);
  }
  return nodes.length > 0 ? nodes : [process.execPath];
}

async function main(): Promise<number> {
  const nodes = nodesFromArgs(process.argv.slice(2));
  const image = buildImageDir();
  try {
    let ok = true;
    for (const node of nodes) ok = (await runImage(image, node)).ok && ok;
    stderrLine(ok ? 'dist check passed' : 'dist check FAILED');
    return ok ? 0 : 1;
  } finally {
    image.remove();
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      stderrLine(`dist check: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}

