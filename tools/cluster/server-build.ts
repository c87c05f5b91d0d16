/**
 * The Temporal server and its SQL tool, built from the server's Go module the way the CLI is
 * built (tools/temporal-cli.ts) and cached beside it, outside the clone, once per machine.
 */
import { join } from 'node:path';
import { cacheRoot, isExecutable, stderrLine, withDirLock } from '../cache';
import { checkGo, goInstall, TEMPORAL_SERVER_VERSION, TemporalCliUnavailable } from '../temporal-cli';

export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';

export interface ServerBinaries {
  version: string;
  /** `temporal-server` (the module's cmd/server). */
  server: string;
  /** `temporal-sql-tool` (the module's cmd/tools/sql). */
  sqlTool: string;
}

export function serverCacheDir(): string {
  return join(cacheRoot(), 'temporal-server', TEMPORAL_SERVER_VERSION);
}

function binaries(): ServerBinaries {
  return { version: TEMPORAL_SERVER_VERSION, server: join(serverCacheDir(), 'server'), sqlTool: join(serverCacheDir(), 'sql') };
}

const built = (b: ServerBinaries) => isExecutable(b.server) && isExecutable(b.sqlTool);

/** Finds the cached binaries or builds them with `go install` (minutes, once). */
export async function ensureTemporalServer(log: (line: string) => void = stderrLine): Promise<ServerBinaries> {
  const b = binaries();
  if (built(b)) return b;
  checkGo(`the Temporal server ${TEMPORAL_SERVER_VERSION}`);
  return withDirLock(join(serverCacheDir(), '.build-lock'), async () => {
    if (built(b)) return b;
    const targets = ['cmd/server', 'cmd/tools/sql'].map((cmd) => `${TEMPORAL_SERVER_MODULE}/${cmd}@${TEMPORAL_SERVER_VERSION}`);
    await goInstall(log, targets, serverCacheDir(), `the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool`);
    if (!built(b)) throw new TemporalCliUnavailable(`go install finished but ${b.server} or ${b.sqlTool} is missing`);
    return b;
  });
}
