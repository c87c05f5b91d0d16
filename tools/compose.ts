/**
 * Finds a Compose loader for `docker compose config` (test/deploy/compose.test.ts), the way helm is
 * provisioned (tools/helm.ts): the `docker compose` plugin when the docker CLI has it, else a
 * `docker-compose` v2+ on PATH, else tools/compose-config built once with Go into the cache outside
 * the clone (~/.cache/card-issuing/compose-config/<compose-go version>-<source hash>/). That program
 * is `docker compose config` without Docker: compose-go, the loader Docker Compose itself uses
 * (the version tools/compose-config/go.mod pins is the one Docker Compose v5.7.0 ships), with the
 * config command's options and post-processing, and Docker Compose's flags. `config` needs no
 * Docker engine, so the plugin works on a machine without one too. Optional for the project:
 * without any of them the compose checks are skipped.
 * Measured here: 57 s wall, 36 s of CPU for a first build with nothing in Go's module or build
 * caches (2 shared cores, load average 7 from other builds); 34 s with the modules already downloaded;
 * about 1 s when Go's build cache is warm (a new source hash after an edit of main.go).
 *
 *   npx tsx tools/compose.ts      # builds it now (npm test's provisioning does too when Go is there)
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cacheRoot, findOnPath, isExecutable, stderrLine, withDirLock } from './cache';
import { checkGo, runGo, TemporalCliUnavailable } from './temporal-cli';

export const COMPOSE_CONFIG_SOURCE = join(__dirname, 'compose-config');
const SOURCE_FILES = ['go.mod', 'go.sum', 'main.go'];
/** tools/compose-config/go.mod says `go 1.24` (compose-go v2.16.2's own minimum). */
const COMPOSE_CONFIG_MIN_GO = [1, 24] as const;

/** A way to run Compose: `file ...args` followed by Compose's own flags (`-f`, `--profile`, `config`, ...). */
export interface ComposeCommand {
  file: string;
  args: string[];
  /** What it is, for messages: `docker compose`, `docker-compose`, or the built program's path. */
  what: string;
}

/** The compose-go version tools/compose-config/go.mod requires. */
export function composeGoVersion(): string {
  const mod = readFileSync(join(COMPOSE_CONFIG_SOURCE, 'go.mod'), 'utf8');
  const m = /github\.com\/compose-spec\/compose-go\/v2 (v\S+)/.exec(mod);
  if (!m) throw new TemporalCliUnavailable('tools/compose-config/go.mod does not require github.com/compose-spec/compose-go/v2');
  return m[1];
}

/** The cache folder of this source: a changed main.go or go.mod builds anew instead of reusing an old binary. */
export function composeConfigCacheDir(): string {
  const hash = createHash('sha256');
  for (const name of SOURCE_FILES) hash.update(`${name}\0`).update(readFileSync(join(COMPOSE_CONFIG_SOURCE, name)));
  return join(cacheRoot(), 'compose-config', `${composeGoVersion()}-${hash.digest('hex').slice(0, 12)}`);
}

function cachedComposeConfig(): string {
  return join(composeConfigCacheDir(), 'compose-config');
}

/** `docker compose` when the plugin answers, `docker-compose` v2 or later (v1 has no `config --format json`). */
function composeOnPath(): ComposeCommand | undefined {
  const docker = findOnPath('docker');
  if (docker && spawnSync(docker, ['compose', 'version'], { stdio: 'ignore', timeout: 10000 }).status === 0) {
    return { file: docker, args: ['compose'], what: 'docker compose' };
  }
  const standalone = findOnPath('docker-compose');
  if (standalone) {
    const res = spawnSync(standalone, ['version', '--short'], { encoding: 'utf8', timeout: 10000 });
    const major = Number(/^v?(\d+)\./.exec(res.stdout?.trim() ?? '')?.[1] ?? 0);
    if (res.status === 0 && major >= 2) return { file: standalone, args: [], what: 'docker-compose' };
  }
  return undefined;
}

/** A Compose loader on PATH or in the cache, without building. */
export function findCompose(): ComposeCommand | undefined {
  const onPath = composeOnPath();
  if (onPath) return onPath;
  const cached = cachedComposeConfig();
  return isExecutable(cached) ? { file: cached, args: [], what: cached } : undefined;
}

/** Finds or builds a Compose loader; throws TemporalCliUnavailable (the provisioning error) naming what is missing. */
export async function ensureCompose(log: (line: string) => void = stderrLine): Promise<ComposeCommand> {
  const found = findCompose();
  if (found) return found;
  const what = `compose-config (compose-go ${composeGoVersion()})`;
  checkGo(what, COMPOSE_CONFIG_MIN_GO);
  const cached = cachedComposeConfig();
  return withDirLock(join(composeConfigCacheDir(), '.build-lock'), async () => {
    if (!isExecutable(cached)) await goBuild(log, cached, what);
    if (!isExecutable(cached)) throw new TemporalCliUnavailable(`go build finished but ${cached} is missing`);
    return { file: cached, args: [], what: cached };
  });
}

/** `go build` of tools/compose-config, statically linked, to a temporary name renamed into place once complete. */
async function goBuild(log: (line: string) => void, target: string, what: string): Promise<void> {
  mkdirSync(dirname(target), { recursive: true });
  const partial = `${target}.partial`;
  log(`Building ${what} with go build (about a minute, once per machine) into ${target} ...`);
  const { code, tail, seconds } = await runGo(['build', '-v', '-trimpath', '-o', partial, '.'], { cwd: COMPOSE_CONFIG_SOURCE }, log);
  if (code !== 0) {
    rmSync(partial, { force: true });
    // One line, for the provisioning's one line: Go's last word (a download refused, a compile error).
    const last = tail.split('\n').map((l) => l.trim()).filter(Boolean).pop() ?? 'no output';
    throw new TemporalCliUnavailable(`go build of tools/compose-config failed (exit ${code}): ${last}`);
  }
  try {
    renameSync(partial, target);
  } catch (err) {
    throw new TemporalCliUnavailable(`could not move ${partial} into place: ${(err as Error).message}`);
  }
  log(`${what} built in ${seconds} s`);
}

if (require.main === module) {
  ensureCompose().then(
    (compose) => stderrLine(`compose: ${compose.what}`),
    (err: Error) => {
      stderrLine(err.message);
      process.exit(1);
    },
  );
}
