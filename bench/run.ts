/**
 * `npm run bench [-- --quick] [-- --only P1,P3]`: every measure as a ratio against a bare baseline
 * measured in the same run on the same server (docs/performance.md). The table goes to stdout,
 * progress to stderr, every figure to bench/results/latest.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { log } from './lib';
import { startBenchStack } from './stack';
import { renderReport, type Report } from './report';
import { runP1 } from './p1-rate-budget';
import { runP2 } from './p2-webhooks';
import { runP3 } from './p3-throughput';
import { runP4 } from './p4-memory';
import { runP5 } from './p5-card-updates';
import { runS1 } from './s1-sqlite';
import { runR1 } from './r1-reconcile';

const QUICK = { p1Windows: 6, p1WindowMs: 45_000, p2Events: 500, p3Flows: 300, p5: { cards: 30, perCard: 5, paced: 150, ratePerSec: 10, oneCard: 30 }, p4Flows: 300, s1Flows: 300, r1Cards: 20, r1Windows: 2, r1WindowMs: 45_000 };
const FULL = { p1Windows: 10, p1WindowMs: 60_000, p2Events: 3000, p3Flows: 1000, p5: { cards: 50, perCard: 20, paced: 600, ratePerSec: 10, oneCard: 100 }, p4Flows: 10_000, s1Flows: 1000, r1Cards: 10_000, r1Windows: 3, r1WindowMs: 60_000 };
/** R1 at a size a quick check can afford (`--r1-cards=N`, `--r1-window-ms=MS`, and for the tail `--r1-tail-window-ms=MS`): its physical limit grows with cards × window. */
const intArg = (name: string) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1]) || undefined;

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const onlyArg = process.argv.find((a) => a.startsWith('--only='));
  const only = new Set((onlyArg?.slice('--only='.length) ?? 'P1,P2,P3,P5,P4,S1,R1').split(',').map((s) => s.trim().toUpperCase()));
  const size = quick ? QUICK : FULL;
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } } });
  const report: Report = { startedAt: new Date().toISOString(), mode: quick ? 'quick' : 'full', machine: machine(), measures: {} };
  const stack = await startBenchStack();
  try {
    if (only.has('P5')) report.measures.P5 = await runP5(stack, size.p5);
    if (only.has('P3')) report.measures.P3 = await runP3(stack, size.p3Flows);
    if (only.has('P2')) report.measures.P2 = await runP2(stack, size.p2Events);
    if (only.has('P4')) report.measures.P4 = await runP4(stack, size.p4Flows);
    if (only.has('P1')) report.measures.P1 = await runP1(stack, size.p1Windows, size.p1WindowMs);
    if (only.has('R1')) {
      const windowMs = intArg('r1-window-ms') ?? size.r1WindowMs;
      report.measures.R1 = await runR1(stack, intArg('r1-cards') ?? size.r1Cards, size.r1Windows, windowMs, intArg('r1-tail-window-ms') ?? windowMs);
    }
  } finally {
    await stack.close();
  }
  if (only.has('S1')) report.measures.S1 = await runS1(size.s1Flows);
  for (const m of Object.values(report.measures)) m.measuredAt ??= report.startedAt;
  report.finishedAt = new Date().toISOString();
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  // A partial run (--only) keeps the other measures of the last report, each with its own run's date.
  if (onlyArg) report.measures = { ...previousMeasures(join(dir, 'latest.json')), ...report.measures };
  writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${renderReport(report)}\n`);
  log(`wrote ${join(dir, 'latest.json')}`);
}

function previousMeasures(path: string): Report['measures'] {
  try {
    const previous = JSON.parse(readFileSync(path, 'utf8')) as Report;
    for (const m of Object.values(previous.measures)) m.measuredAt ??= previous.startedAt;
    return previous.measures;
  } catch {
    return {};
  }
}

function machine() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const os = require('node:os') as typeof import('node:os');
  return { cpus: os.cpus().length, memoryMb: Math.round(os.totalmem() / 2 ** 20), node: process.version, load: os.loadavg().map((l) => Math.round(l * 100) / 100) };
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
