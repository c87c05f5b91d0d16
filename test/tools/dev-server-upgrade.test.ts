/**
 * A dev server kept on a database from an earlier release (`npm run temporal`'s .data/temporal.db)
 * gets the search attributes added since: the CLI's `--search-attribute` registers on a new
 * database only, and a worker refuses to start without them (src/fleet/workers.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config';
import { freePort } from '../../src/ports';
import { SEARCH_ATTRIBUTES } from '../../src/shared/search-attributes';
import { startDevServer, stopProcessGroup, waitUntilServing } from '../../tools/dev-server';
import { ensureTemporalCli } from '../../tools/temporal-cli';

jest.setTimeout(120_000);

test('a dev server on an older database gets the search attributes it lacks', async () => {
  const cliPath = await ensureTemporalCli(loadConfig().temporal.cliPath);
  const dir = mkdtempSync(join(tmpdir(), 'dev-server-upgrade-'));
  const dbFile = join(dir, 'temporal.db');
  try {
    // The earlier release: a database made with one of today's attributes.
    const port = await freePort();
    const old = spawn(cliPath, ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--db-filename', dbFile, '--search-attribute', 'CardId=Keyword'], { stdio: 'ignore', detached: true });
    const exited = new Promise<number | null>((resolve) => old.once('exit', resolve));
    await waitUntilServing(`127.0.0.1:${port}`, exited);
    await stopProcessGroup(old, exited);

    const server = await startDevServer({ cliPath, headless: true, dbFile });
    try {
      const connection = await Connection.connect({ address: server.address });
      const listed = await connection.operatorService.listSearchAttributes({ namespace: 'default' }).finally(() => connection.close());
      expect(Object.keys(listed.customAttributes ?? {})).toEqual(expect.arrayContaining(Object.keys(SEARCH_ATTRIBUTES)));
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
