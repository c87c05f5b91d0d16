/**
 * Finds the Temporal CLI, building it from its Go module when the machine has none.
 * The SDK's own server download is unavailable on machines that reach package registries
 * only, so the project provisions the CLI itself. Order: $TEMPORAL_CLI_PATH, `temporal`
 * on PATH, the cache outside the clone, otherwise a build from the module into that cache.
 *
 * The CLI is our dev server (`temporal server start-dev`), and the one served here that `go
 * install` can build (v1.5.1) embeds the Temporal server 1.29.1, which never tells a pinned run
 * that its target build changed (docs/versioning.md). So it is built from its module's source with
 * the server the cluster runs (TEMPORAL_SERVER_VERSION, 1.30.8), which does: the module is
 * downloaded, its go.mod asks for that server, and the two places where the CLI's source meets an
 * API the newer server changed are mended (CLI_SOURCE_MENDS), each checked to apply.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheRoot, findOnPath, isExecutable, stderrLine, withDirLock } from './cache';

/** Tags from v1.6 carry `replace` directives to modules that are not served: v1.5.1 is the newest that builds. */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
/**
 * The server of the dev server and of the cluster (tools/cluster/server-build.ts): the oldest line
 * that moves a pinned run to a new current build at continue-as-new (1.30.2+ tells the run
 * `targetWorkerDeploymentVersionChanged`; 1.29.1, which the CLI v1.5.1 embeds, never does: `npm run
 * upgrade-on-can-check`), and the newest tag of it that builds with the Go here (v1.30.9, v1.31.5
 * and v1.32.x declare `go 1.26.10`). docs/versioning.md, "Releases 3 and 4".
 */
export const TEMPORAL_SERVER_VERSION = 'v1.30.8';
const MIN_GO = [1, 25] as const;

/**
 * Where the CLI v1.5.1's source meets an API that the server 1.30.8 (and the Temporal API it
 * brings) changed: a dynamic config key is made, no longer converted; a worker's process key is
 * now its grouping key. Each is one line of the CLI's own code, not of the server.
 */
const CLI_SOURCE_MENDS: ReadonlyArray<{ file: string; from: string; to: string }> = [
  { file: 'temporalcli/devserver/server.go', from: 'dynConf[dynamicconfig.Key(k)] = v', to: 'dynConf[dynamicconfig.MakeKey(k)] = v' },
  { file: 'temporalcli/commands.worker.go', from: 'info.GetProcessKey()', to: 'info.GetWorkerGroupingKey()' },
];

export class TemporalCliUnavailable extends Error {
  readonly type = 'TemporalCliUnavailable';
}

export function cacheDir(): string {
  return join(cacheRoot(), 'temporal-cli', `${TEMPORAL_CLI_VERSION}-server-${TEMPORAL_SERVER_VERSION}`);
}

export function cachedCliPath(): string {
  return join(cacheDir(), 'temporal');
}

/** The CLI's path, or undefined when it would have to be built. */
export function findTemporalCli(explicitPath?: string): string | undefined {
  if (explicitPath) {
    if (!isExecutable(explicitPath)) throw new TemporalCliUnavailable(`TEMPORAL_CLI_PATH ${explicitPath} is not an executable file`);
    return explicitPath;
  }
  const onPath = findOnPath('temporal');
  if (onPath) return onPath;
  return isExecutable(cachedCliPath()) ? cachedCliPath() : undefined;
}

/** Finds or builds the CLI; progress goes to `log` (stderr by default). */
export async function ensureTemporalCli(explicitPath?: string, log: (line: string) => void = stderrLine): Promise<string> {
  const found = findTemporalCli(explicitPath);
  if (found) return found;
  checkGo();
  return withDirLock(join(cacheDir(), '.build-lock'), async () => {
    // Another process may have finished the build while we waited for the lock.
    if (isExecutable(cachedCliPath())) return cachedCliPath();
    await buildCli(log);
    if (!isExecutable(cachedCliPath())) throw new TemporalCliUnavailable(`the build finished but ${cachedCliPath()} is missing`);
    return cachedCliPath();
  });
}

/** The CLI's module source, its server raised to TEMPORAL_SERVER_VERSION and mended, built into the cache. */
async function buildCli(log: (line: string) => void): Promise<void> {
  const what = `the Temporal CLI ${TEMPORAL_CLI_VERSION} with the server ${TEMPORAL_SERVER_VERSION}`;
  const download = spawnSync('go', ['mod', 'download', '-json', `github.com/temporalio/cli@${TEMPORAL_CLI_VERSION}`], { encoding: 'utf8' });
  const moduleDir = download.status === 0 ? (JSON.parse(download.stdout) as { Dir?: string }).Dir : undefined;
  if (!moduleDir) throw new TemporalCliUnavailable(`go mod download github.com/temporalio/cli@${TEMPORAL_CLI_VERSION} failed (exit ${download.status}): ${download.stderr.slice(-2000)}`);
  const source = mkdtempSync(join(tmpdir(), 'temporal-cli-'));
  try {
    cpSync(moduleDir, source, { recursive: true });
    writable(source);
    for (const mend of CLI_SOURCE_MENDS) {
      const path = join(source, mend.file);
      const text = readFileSync(path, 'utf8');
      if (!text.includes(mend.from)) throw new TemporalCliUnavailable(`${mend.file} of the CLI ${TEMPORAL_CLI_VERSION} no longer holds "${mend.from}": its mends (tools/temporal-cli.ts) do not fit`);
      writeFileSync(path, text.replace(mend.from, mend.to));
    }
    const edit = await runGo(['mod', 'edit', `-require=go.temporal.io/server@${TEMPORAL_SERVER_VERSION}`], { cwd: source }, log);
    if (edit.code !== 0) throw new TemporalCliUnavailable(`go mod edit failed (exit ${edit.code}):\n${edit.tail}`);
    mkdirSync(cacheDir(), { recursive: true });
    log(`Building ${what} (a few minutes, once per machine) into ${cacheDir()} ...`);
    const { code, tail, seconds } = await runGo(['build', '-v', '-mod=mod', '-o', cachedCliPath(), './cmd/temporal'], { cwd: source }, log);
    if (code !== 0) throw new TemporalCliUnavailable(`go build of ${what} failed (exit ${code}):\n${tail}`);
    log(`${what} built in ${seconds} s`);
  } finally {
    rmSync(source, { recursive: true, force: true });
  }
}

/** The module cache's files are read-only: the copy is made writable to be edited and built. */
function writable(dir: string): void {
  chmodSync(dir, 0o755);
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) writable(path);
    else chmodSync(path, 0o644);
  }
}

/** Throws unless Go >= `min` (1.25 by default) is on PATH; `what` names what is built with it (the cluster smoke builds the server). */
export function checkGo(what = 'the CLI', min: readonly [number, number] = MIN_GO): void {
  const res = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' });
  if (res.error || res.status !== 0) {
    throw new TemporalCliUnavailable(
      what === 'the CLI'
        ? `No Temporal CLI found: install Go >= ${min.join('.')} (the project builds the CLI with it) or set TEMPORAL_CLI_PATH to a temporal binary`
        : `Go >= ${min.join('.')} is needed to build ${what}: none found on PATH`,
    );
  }
  const m = /go(\d+)\.(\d+)/.exec(res.stdout);
  const [major, minor] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (major < min[0] || (major === min[0] && minor < min[1])) {
    throw new TemporalCliUnavailable(
      what === 'the CLI'
        ? `Go ${res.stdout.trim()} is too old to build the Temporal CLI ${TEMPORAL_CLI_VERSION}: install Go >= ${min.join('.')} or set TEMPORAL_CLI_PATH`
        : `Go ${res.stdout.trim()} is too old to build ${what}: install Go >= ${min.join('.')}`,
    );
  }
}

/** `go install` of `targets` (module@version) into `dir`, statically linked; progress to `log`. */
export async function goInstall(
  log: (line: string) => void,
  targets: string[],
  dir: string,
  what: string,
): Promise<void> {
  mkdirSync(dir, { recursive: true });
  log(`Building ${what} with go install (a few minutes, once per machine) into ${dir} ...`);
  const { code, tail, seconds } = await runGo(['install', '-v', ...targets], { env: { GOBIN: dir } }, log);
  if (code !== 0) throw new TemporalCliUnavailable(`go install ${targets.join(' ')} failed (exit ${code}):\n${tail}`);
  log(`${what} built in ${seconds} s`);
}

/**
 * Runs one go command statically linked (CGO off, no VCS stamping), telling its progress every
 * 20 s; resolves its exit code, the tail of its output and how long it took. Rejects only when
 * go cannot be run at all.
 */
export function runGo(args: string[], opts: { cwd?: string; env?: Record<string, string> }, log: (line: string) => void): Promise<{ code: number | null; tail: string; seconds: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, {
      cwd: opts.cwd,
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: `${process.env.GOFLAGS ?? ''} -buildvcs=false`.trim(), ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let packages = 0;
    let tail = '';
    const ticker = setInterval(() => log(`  ... still building: ${packages} packages compiled, ${Math.round((Date.now() - started) / 1000)} s`), 20000);
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-4000);
      packages += text.split('\n').filter((l) => l && !l.startsWith('go: downloading')).length;
    });
    child.on('error', (err) => {
      clearInterval(ticker);
      reject(new TemporalCliUnavailable(`could not run go: ${err.message}`));
    });
    child.on('close', (code) => {
      clearInterval(ticker);
      resolve({ code, tail, seconds: Math.round((Date.now() - started) / 1000) });
    });
  });
}

