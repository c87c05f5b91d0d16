/**
 * S1: the dev server's SQLite pragmas. Bare one-activity workflows, saturated, on a file-backed
 * dev server with SQLite's defaults and then with DEV_SQLITE_PRAGMAS (WAL, synchronous=NORMAL).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEV_SQLITE_PRAGMAS } from '../tools/dev-server';
import { log, mapLimit, round } from './lib';
import { startBenchStack, uniqueQueue } from './stack';

export interface S1Result {
  flows: number;
  defaultPragmasPerSec: number;
  walNormalPerSec: number;
  ratio: number;
}

export async function runS1(flows: number): Promise<S1Result> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sqlite-'));
  try {
    const defaultPragmasPerSec = await throughput(join(dir, 'default.db'), {}, flows);
    const walNormalPerSec = await throughput(join(dir, 'wal.db'), { ...DEV_SQLITE_PRAGMAS }, flows);
    return { flows, defaultPragmasPerSec: round(defaultPragmasPerSec, 1), walNormalPerSec: round(walNormalPerSec, 1), ratio: round(walNormalPerSec / defaultPragmasPerSec) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function throughput(dbFile: string, sqlitePragmas: Record<string, string>, flows: number): Promise<number> {
  const label = Object.keys(sqlitePragmas).length ? 'WAL + synchronous=NORMAL' : 'SQLite defaults';
  log(`S1 ${label}: file-backed dev server, ${flows} bare flows`);
  const stack = await startBenchStack({ dbFile, sqlitePragmas });
  try {
    const queue = uniqueQueue('s1');
    const worker = await stack.worker('bare', queue);
    const began = Date.now();
    const handles = await mapLimit(
      Array.from({ length: flows }, (_, i) => i),
      64,
      (i) => stack.client().workflow.start('bareOneActivity', { taskQueue: queue, workflowId: `${queue}-${i}`, args: [] }),
    );
    await Promise.all(handles.map((h) => h.result()));
    const perSec = (flows * 1000) / (Date.now() - began);
    log(`S1 ${label}: ${perSec.toFixed(1)} flows/s`);
    await worker.stop();
    return perSec;
  } finally {
    await stack.close();
  }
}
