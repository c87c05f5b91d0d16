/**
 * Finds the Temporal CLI, building it from its Go module when the machine has none.
 * The SDK's own server download is unavailable on machines that reach package registries
 * only, so the project provisions the CLI itself. Order: $TEMPORAL_CLI_PATH, `temporal`
 * on PATH, the cache outside the clone, otherwise `go install` into that cache.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot, findOnPath, isExecutable, stderrLine, withDirLock } from './cache';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
/** Tags from v1.6 carry `replace` directives and cannot be `go install`ed. */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const MIN_GO = [1, 25] as const;

export class TemporalCliUnavailable extends Error {
  readonly type = 'TemporalCliUnavailable';
}

export function cacheDir(): string {
  return join(cacheRoot(), 'temporal-cli', TEMPORAL_CLI_VERSION);
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
    await goInstall(log);
    if (!isExecutable(cachedCliPath())) throw new TemporalCliUnavailable(`go install finished but ${cachedCliPath()} is missing`);
    return cachedCliPath();
  });
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
  targets: string[] = [`${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`],
  dir = cacheDir(),
  what = `the Temporal CLI ${TEMPORAL_CLI_VERSION}`,
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

