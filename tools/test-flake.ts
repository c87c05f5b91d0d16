/**
 * Flake hunting (issue 53, docs/testing.md): runs the same suites N times and reports every failure
 * with the log of the run it happened in, kept in a file, so that a flake gets a named cause rather
 * than a raised timeout.
 *
 *   npm run test:flake -- test/deploy/rollout.test.ts --runs 20
 *   npm run test:flake -- test/workflows/esim.test.ts --runs 10 --parallel 2   # two runs at once: CI's load on two cores
 *   npm run test:flake -- test/workflows/esim.test.ts --runs 10 -t 'under 30 % faults'   # other arguments go to jest
 *
 * Each run is its own `jest --maxWorkers=1` (its own dev server, as in CI); its output goes to
 * `.data/test-flake/<when>/run-<i>.log` and its report to `run-<i>.json`. Exit 1 when a run failed.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..');

interface RunResult {
  run: number;
  code: number;
  seconds: number;
  log: string;
  failed: Array<{ test: string; message: string }>;
}

interface JestReport {
  testResults: Array<{ name: string; message: string; assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }> }>;
}

function parseArgs(argv: string[]): { runs: number; parallel: number; jestArgs: string[] } {
  let runs = 10;
  let parallel = 1;
  const jestArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--runs') runs = Number(argv[++i]);
    else if (argv[i] === '--parallel') parallel = Number(argv[++i]);
    else jestArgs.push(argv[i]);
  }
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number of runs, at least 1');
  if (!Number.isInteger(parallel) || parallel < 1) throw new Error('--parallel takes a whole number of runs at once, at least 1');
  if (!jestArgs.some((a) => !a.startsWith('-'))) throw new Error('name the suites to run (test/x.test.ts, or a jest path pattern): npm run test:flake -- test/x.test.ts --runs 10');
  return { runs, parallel, jestArgs };
}

/** What failed in a run: each failed test with its message's first lines, or the suite's own message (a failed beforeAll, a crash). */
function failuresOf(reportPath: string): Array<{ test: string; message: string }> {
  if (!existsSync(reportPath)) return [{ test: '(no report: jest itself failed)', message: '' }];
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as JestReport;
  const short = (text: string) => text.split('\n').filter((l) => l.trim()).slice(0, 6).join('\n');
  return report.testResults.flatMap((suite) => {
    const tests = suite.assertionResults.filter((a) => a.status === 'failed').map((a) => ({ test: `${relative(ROOT, suite.name)}: ${a.fullName}`, message: short(a.failureMessages.join('\n')) }));
    return tests.length > 0 || !suite.message ? tests : [{ test: `${relative(ROOT, suite.name)} (the suite)`, message: short(suite.message) }];
  });
}

function runOnce(run: number, dir: string, jestArgs: string[]): Promise<RunResult> {
  const log = join(dir, `run-${run}.log`);
  const report = join(dir, `run-${run}.json`);
  const out = createWriteStream(log);
  const started = Date.now();
  const child = spawn(process.execPath, [require.resolve('jest/bin/jest'), '--maxWorkers=1', '--json', `--outputFile=${report}`, ...jestArgs], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      out.end();
      const seconds = (Date.now() - started) / 1000;
      resolve({ run, code: code ?? 1, seconds, log: relative(ROOT, log), failed: code === 0 ? [] : failuresOf(report) });
    });
  });
}

async function main(argv: string[]): Promise<number> {
  const { runs, parallel, jestArgs } = parseArgs(argv);
  const dir = join(ROOT, '.data/test-flake', new Date().toISOString().replace(/[:.]/g, '-'));
  mkdirSync(dir, { recursive: true });
  process.stderr.write(`test:flake: ${runs} runs of jest ${jestArgs.join(' ')}, ${parallel} at a time; logs in ${relative(ROOT, dir)}\n`);
  const results: RunResult[] = [];
  let next = 1;
  const worker = async () => {
    while (next <= runs) {
      const result = await runOnce(next++, dir, jestArgs);
      results.push(result);
      process.stderr.write(`run ${result.run}: ${result.code === 0 ? 'passed' : `FAILED (${result.log})`} in ${result.seconds.toFixed(0)} s\n`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, runs) }, worker));

  results.sort((a, b) => a.run - b.run);
  const failedRuns = results.filter((r) => r.code !== 0);
  const byTest = new Map<string, RunResult[]>();
  for (const r of failedRuns) for (const f of r.failed) byTest.set(f.test, [...(byTest.get(f.test) ?? []), r]);
  const times = results.map((r) => r.seconds).sort((a, b) => a - b);
  const lines = [
    `${runs} runs of jest ${jestArgs.join(' ')} (${parallel} at a time): ${runs - failedRuns.length} passed, ${failedRuns.length} failed; run time median ${times[Math.floor(times.length / 2)].toFixed(0)} s, max ${times[times.length - 1].toFixed(0)} s`,
    ...[...byTest].map(([test, rs]) => {
      const first = rs[0].failed.find((f) => f.test === test)!;
      return `\nFAILED ${rs.length}/${runs}: ${test}\n  runs: ${rs.map((r) => `${r.run} (${r.log})`).join(', ')}\n  ${first.message.split('\n').join('\n  ')}`;
    }),
  ];
  const summary = lines.join('\n');
  writeFileSync(join(dir, 'summary.txt'), `${summary}\n`);
  process.stdout.write(`${summary}\nsummary: ${relative(ROOT, join(dir, 'summary.txt'))}\n`);
  return failedRuns.length > 0 ? 1 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`test:flake: ${(err as Error).message}\n`);
      process.exit(2);
    },
  );
}
