/**
 * Finds the Temporal CLI, building it from its Go module when the machine has none.
 * The SDK's own server download is unavailable on machines that reach package registries
 * only, so the project provisions the CLI itself. Order: $TEMPORAL_CLI_PATH, `temporal`
 * on PATH, the cache outside the clone, otherwise `go install` into that cache.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { cacheRoot, isExecutable, stderrLine, withDirLock } from './cache';

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
  const onPath = (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'temporal')).find(isExecutable);
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

function checkGo(): void {
  const res = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' });
  if (res.error || res.status !== 0) {
    throw new TemporalCliUnavailable(
      `No Temporal CLI found: install Go >= ${MIN_GO.join('.')} (the project builds the CLI with it) or set TEMPORAL_CLI_PATH to a temporal binary`,
    );
  }
  const m = /go(\d+)\.(\d+)/.exec(res.stdout);
  const [major, minor] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (major < MIN_GO[0] || (major === MIN_GO[0] && minor < MIN_GO[1])) {
    throw new TemporalCliUnavailable(
      `Go ${res.stdout.trim()} is too old to build the Temporal CLI ${TEMPORAL_CLI_VERSION}: install Go >= ${MIN_GO.join('.')} or set TEMPORAL_CLI_PATH`,
    );
  }
}

function goInstall(log: (line: string) => void): Promise<void> {
  mkdirSync(cacheDir(), { recursive: true });
  log(`Building the Temporal CLI ${TEMPORAL_CLI_VERSION} with go install (a few minutes, once per machine) into ${cacheDir()} ...`);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('go', ['install', '-v', `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, CGO_ENABLED: '0', GOBIN: cacheDir(), GOFLAGS: `${process.env.GOFLAGS ?? ''} -buildvcs=false`.trim() },
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
      if (code === 0) {
        log(`Temporal CLI built in ${Math.round((Date.now() - started) / 1000)} s`);
        resolve();
      } else {
        reject(new TemporalCliUnavailable(`go install ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION} failed (exit ${code}):\n${tail}`));
      }
    });
  });
}

