/**
 * A worker process while its Temporal server is down: the SDK core's retry warnings come out as
 * our JSON lines (no raw, ANSI-coloured stderr), a handful of them, saying what is down and since
 * when, and that it is back. The test runs its own dev server with a database file, so it can
 * stop and restart it without touching the run's server.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { freePort } from '../../src/ports';
import { startDevServer, type DevServer } from '../../tools/dev-server';
import { spawnApp, type AppProcess } from '../../tools/processes';
import { ensureTemporalCli } from '../../tools/temporal-cli';
import { waitUntil } from '../helpers/wait';
import { TEST_CODEC_KEY, TEST_PIN_KEYS } from '../helpers/stack';

const ANSI = /\x1b\[/;

describe('a worker during a Temporal outage', () => {
  let server: DevServer | undefined;
  let worker: AppProcess | undefined;
  afterAll(async () => {
    await worker?.stop();
    await server?.stop();
  });

  test('logs the outage as a few JSON lines naming the address and since when, then that Temporal is back', async () => {
    const cliPath = await ensureTemporalCli(loadConfig().temporal.cliPath);
    const dir = mkdtempSync(join(tmpdir(), 'outage-logs-'));
    const port = await freePort();
    const start = () => startDevServer({ cliPath, port, dbFile: join(dir, 'temporal.db'), headless: true });
    server = await start();
    const logFile = join(dir, 'worker.log');
    worker = spawnApp('worker', 'src/worker.ts', {
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: `outage-logs-${port}`,
      PAYLOAD_CODEC_KEY: TEST_CODEC_KEY,
      PAYLOAD_CODEC_KEY_ID: 'test',
      PIN_SEAL_PRIVATE_KEY: TEST_PIN_KEYS.privateKey,
      WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE!,
      LOG_LEVEL: 'info',
      FORCE_COLOR: '1', // the SDK core colours its own console lines when it may: none may reach the log
    }, logFile);
    const lines = () => readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
    await waitUntil(async () => lines().some((l) => l.includes('"msg":"polling"')), 60_000, 'the worker polling');
    const polling = JSON.parse(lines().find((l) => l.includes('"msg":"polling"'))!);
    expect(polling).toMatchObject({ temporalAddress: server.address, namespace: 'default' });
    expect(polling.taskQueues).toEqual(expect.arrayContaining([`outage-logs-${port}`, `outage-logs-${port}-entities`]));
    const before = lines().length;

    await server.stop();
    await new Promise((r) => setTimeout(r, 20_000));
    server = await start();
    await waitUntil(async () => lines().some((l) => l.includes('Temporal reachable again')), 60_000, 'the line saying Temporal is back');

    const during = lines().slice(before);
    for (const line of during) {
      expect(line).not.toMatch(ANSI);
      expect(() => JSON.parse(line)).not.toThrow();
    }
    const parsed = during.map((l) => JSON.parse(l) as Record<string, unknown>);
    const down = parsed.find((l) => String(l.msg).startsWith('Temporal unreachable'));
    expect(down).toMatchObject({ level: 'warn', component: 'worker', temporalAddress: server.address, since: expect.any(String) });
    expect(parsed.find((l) => l.msg === 'Temporal reachable again')).toMatchObject({ since: down!.since, downForS: expect.any(Number) });
    // A few lines, where the raw core wrote one per poller per retry (thousands in ten minutes).
    expect(during.length).toBeLessThanOrEqual(10);
    process.stderr.write(`worker log during a 20 s outage (${during.length} lines):\n${during.join('\n')}\n`);
  }, 180_000);
});
