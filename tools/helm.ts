/**
 * Finds helm, building it from its Go module when the machine has none, the way the Temporal CLI
 * is provisioned (tools/temporal-cli.ts): `helm` on PATH, else the cache outside the clone
 * (~/.cache/card-issuing/helm/<version>/), else `go install helm.sh/helm/v3/cmd/helm@<version>`
 * into that cache. Optional for the project: without it the chart checks are skipped.
 * Measured here: 6 min 25 s wall, 145 s of CPU (2 shared cores, nice'd, beside another go build).
 *
 *   npx tsx tools/helm.ts      # builds it now (npm test's provisioning does too when Go is there)
 */
import { join } from 'node:path';
import { cacheRoot, findOnPath, isExecutable, stderrLine, withDirLock } from './cache';
import { checkGo, goInstall, TemporalCliUnavailable } from './temporal-cli';

export const HELM_MODULE = 'helm.sh/helm/v3/cmd/helm';
/** v3.22.0's go.mod asks for Go 1.26.0 and carries no `replace` directives. */
export const HELM_VERSION = 'v3.22.0';
const HELM_MIN_GO = [1, 26] as const;

export function helmCacheDir(): string {
  return join(cacheRoot(), 'helm', HELM_VERSION);
}

/** helm on PATH or in the cache, without building. */
export function findHelm(): string | undefined {
  const cached = join(helmCacheDir(), 'helm');
  return findOnPath('helm') ?? (isExecutable(cached) ? cached : undefined);
}

/** Finds or builds helm; throws TemporalCliUnavailable (the provisioning error) naming what is missing. */
export async function ensureHelm(log: (line: string) => void = stderrLine): Promise<string> {
  const found = findHelm();
  if (found) return found;
  checkGo(`helm ${HELM_VERSION}`, HELM_MIN_GO);
  const cached = join(helmCacheDir(), 'helm');
  return withDirLock(join(helmCacheDir(), '.build-lock'), async () => {
    if (isExecutable(cached)) return cached;
    await goInstall(log, [`${HELM_MODULE}@${HELM_VERSION}`], helmCacheDir(), `helm ${HELM_VERSION}`);
    if (!isExecutable(cached)) throw new TemporalCliUnavailable(`go install finished but ${cached} is missing`);
    return cached;
  });
}

if (require.main === module) {
  ensureHelm().then(
    (path) => stderrLine(`helm: ${path}`),
    (err: Error) => {
      stderrLine(err.message);
      process.exit(1);
    },
  );
}
