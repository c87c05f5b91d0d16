/**
 * Where the test suite's time goes (issue 53, docs/testing.md): a per-suite wall-time table,
 * slowest first, with totals, and how busy the machine's CPUs were while it ran.
 *
 *   npm run test:times                                  # every suite, as CI runs them (jest --maxWorkers=2)
 *   npm run test:times -- test/money-edges              # some suites (any jest arguments)
 *   npm run test:times -- --from .data/test-times/last.json   # a jest --json report already written
 *   npm run test:times -- --from ci.log                 # a jest log (only suites over 5 s carry a time)
 *   npm run test:times -- --each test/a.test.ts test/b.test.ts # each alone, with the CPU it used: what it waits on
 *
 * Options: `--top N` (rows shown, default all), `--tests N` (the N slowest tests too, default 15),
 * `--write-times` (merge the suites' times into test/suite-times.json, the order test/sequencer.js
 * starts suites in: longest first).
 * A run writes jest's report to `.data/test-times/last.json` and the table beside it (`last.txt`).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..');
const OUT_DIR = join(ROOT, '.data/test-times');

export interface SuiteTime {
  file: string;
  seconds: number | undefined;
  tests: number;
  failed: number;
  /** Core-seconds the machine spent busy while the suite ran (`--each` only). */
  cpuSeconds?: number;
}

export interface RunTimes {
  suites: SuiteTime[];
  /** The run's wall time, when the source says it. */
  wallSeconds?: number;
  /** The machine's busy share of its cores over the run (0..1), when measured. */
  cpuBusy?: number;
  /** Core-seconds the run's own processes used, when measured. */
  cpuSeconds?: number;
  slowestTests: Array<{ file: string; name: string; seconds: number }>;
}

interface JestReport {
  startTime: number;
  testResults: Array<{
    name: string;
    status: string;
    startTime: number;
    endTime: number;
    assertionResults: Array<{ fullName: string; status: string; duration?: number | null }>;
  }>;
}

/** The per-suite times of a jest `--json` report. */
export function timesFromReport(report: JestReport): RunTimes {
  const suites = report.testResults.map((r) => ({
    file: relative(ROOT, r.name),
    seconds: (r.endTime - r.startTime) / 1000,
    tests: r.assertionResults.filter((a) => a.status !== 'pending' && a.status !== 'skipped').length,
    failed: r.assertionResults.filter((a) => a.status === 'failed').length + (r.status === 'failed' && r.assertionResults.length === 0 ? 1 : 0),
  }));
  const ends = report.testResults.map((r) => r.endTime);
  const slowestTests = report.testResults.flatMap((r) =>
    r.assertionResults.filter((a) => typeof a.duration === 'number').map((a) => ({ file: relative(ROOT, r.name), name: a.fullName, seconds: (a.duration as number) / 1000 })),
  );
  return { suites, wallSeconds: ends.length ? (Math.max(...ends) - report.startTime) / 1000 : undefined, slowestTests };
}

/** The per-suite times of a jest log: `PASS test/x.test.ts (12.3 s)`; a suite under jest's 5 s threshold has no time. */
export function timesFromLog(text: string): RunTimes {
  const suites: SuiteTime[] = [];
  for (const line of text.split('\n')) {
    const m = /^(PASS|FAIL) (\S+\.test\.ts)(?: \(([\d.]+) (m?s)\))?/.exec(line);
    if (!m) continue;
    const seconds = m[3] === undefined ? undefined : Number(m[3]) / (m[4] === 'ms' ? 1000 : 1);
    suites.push({ file: m[2], seconds, tests: 0, failed: m[1] === 'FAIL' ? 1 : 0 });
  }
  const wall = /^Time:\s+([\d.]+) s/m.exec(text);
  return { suites, wallSeconds: wall ? Number(wall[1]) : undefined, slowestTests: [] };
}

/** The table, slowest first, and the totals. */
export function formatTimes(times: RunTimes, opts: { top?: number; tests?: number } = {}): string {
  const sorted = [...times.suites].sort((a, b) => (b.seconds ?? 0) - (a.seconds ?? 0));
  const shown = opts.top ? sorted.slice(0, opts.top) : sorted;
  const timed = times.suites.filter((s) => s.seconds !== undefined);
  const sum = timed.reduce((t, s) => t + s.seconds!, 0);
  const withCpu = times.suites.some((s) => s.cpuSeconds !== undefined);
  const lines = [
    `| suite | wall s | share |${withCpu ? ' CPU core-s | CPU / wall |' : ''} tests |`,
    `|---|---:|---:|${withCpu ? '---:|---:|' : ''}---:|`,
    ...shown.map((s) => {
      const cpu = withCpu ? ` ${s.cpuSeconds?.toFixed(1) ?? ''} | ${s.cpuSeconds !== undefined && s.seconds ? (s.cpuSeconds / s.seconds).toFixed(2) : ''} |` : '';
      return `| ${s.file}${s.failed ? ' (FAILED)' : ''} | ${s.seconds === undefined ? '< 5' : s.seconds.toFixed(1)} | ${s.seconds === undefined || !sum ? '' : `${((100 * s.seconds) / sum).toFixed(1)} %`} |${cpu} ${s.tests || ''} |`;
    }),
    '',
    `${times.suites.length} suites, ${times.suites.reduce((t, s) => t + s.tests, 0)} tests, ${times.suites.filter((s) => s.failed).length} failed; sum of suite times ${sum.toFixed(0)} s` +
      (timed.length < times.suites.length ? ` (${times.suites.length - timed.length} suites under 5 s not counted)` : ''),
  ];
  if (times.wallSeconds !== undefined) lines.push(`wall ${times.wallSeconds.toFixed(0)} s (${(times.wallSeconds / 60).toFixed(1)} min)${sum ? `; sum / wall ${(sum / times.wallSeconds).toFixed(2)}` : ''}`);
  if (times.cpuBusy !== undefined) lines.push(`the machine's CPUs busy over the run: ${(100 * times.cpuBusy).toFixed(0)} % of ${cpus().length} cores (the run's own processes: ${times.cpuSeconds?.toFixed(0)} core-s)`);
  const nTests = opts.tests ?? 15;
  if (nTests > 0 && times.slowestTests.length > 0) {
    lines.push('', `slowest ${nTests} tests:`, '| test | s |', '|---|---:|');
    for (const t of [...times.slowestTests].sort((a, b) => b.seconds - a.seconds).slice(0, nTests)) lines.push(`| ${t.file}: ${t.name} | ${t.seconds.toFixed(1)} |`);
  }
  return lines.join('\n');
}

/** Busy and total jiffies of all CPUs (/proc/stat); undefined off Linux. */
function machineJiffies(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = fields[3] + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/**
 * CPU jiffies spent by `root` and every process below it (the jest workers, the dev server, the
 * processes tests start), children already reaped included (cutime, cstime): what the run itself
 * used, whatever else the machine was doing.
 */
function treeJiffies(root: number): number {
  const stats = new Map<number, { ppid: number; jiffies: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // after "pid (comm) ": state ppid ... utime(14) stime(15) cutime(16) cstime(17); comm may hold spaces
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(entry), { ppid: Number(f[1]), jiffies: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
    } catch {
      // the process ended meanwhile
    }
  }
  let sum = 0;
  const below = new Set([root]);
  // parents before children is not guaranteed: repeat until no process joins
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, s] of stats) {
      if (!below.has(pid) && below.has(s.ppid)) {
        below.add(pid);
        grew = true;
      }
    }
  }
  for (const pid of below) sum += stats.get(pid)?.jiffies ?? 0;
  return sum;
}

/** Samples CPU jiffies every 250 ms while jest runs (its process tree's, and the machine's), so that any window of the run (a suite's) can be read. */
class CpuTimeline {
  private readonly samples: Array<{ t: number; tree: number; busy: number; total: number }> = [];
  private readonly timer = setInterval(() => this.sample(), 250);
  constructor(private readonly root: number) {
    this.sample();
  }
  private sample(): void {
    const machine = machineJiffies();
    if (machine) this.samples.push({ t: Date.now(), tree: treeJiffies(this.root), ...machine });
  }
  stop(): void {
    clearInterval(this.timer);
  }
  /** Core-seconds the run's processes used, and the machine's busy share of all its cores, between two instants (ms since the epoch). */
  window(start: number, end: number): { cpuSeconds: number; busy: number } | undefined {
    if (this.samples.length < 2) return undefined;
    const at = (t: number) => this.samples.reduce((best, s) => (Math.abs(s.t - t) < Math.abs(best.t - t) ? s : best));
    const a = at(start);
    const b = at(end);
    if (b.total <= a.total) return undefined;
    // jiffies are 1/100 s (USER_HZ)
    return { cpuSeconds: (b.tree - a.tree) / 100, busy: (b.busy - a.busy) / (b.total - a.total) };
  }
}

/** Runs jest with these arguments, the report to `outputFile`; resolves its exit code and the CPU timeline of the run. */
function runJest(args: string[], outputFile: string, stdio: 'inherit' | 'ignore' = 'inherit'): Promise<{ code: number; cpu: CpuTimeline; start: number; end: number }> {
  const start = Date.now();
  const child = spawn(process.execPath, [require.resolve('jest/bin/jest'), '--json', `--outputFile=${outputFile}`, ...args], { cwd: ROOT, stdio });
  const cpu = new CpuTimeline(child.pid!);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    // the last sample before the tree is gone: on exit the jest process's own times are no longer readable
    child.on('exit', (code) => {
      cpu.stop();
      resolve({ code: code ?? 1, cpu, start, end: Date.now() });
    });
  });
}

const SUITE_TIMES = join(ROOT, 'test/suite-times.json');

/** Merges the timed suites of this run into test/suite-times.json (test/sequencer.js reads it). */
function writeSuiteTimes(times: RunTimes): void {
  let seconds: Record<string, number> = {};
  try {
    seconds = (JSON.parse(readFileSync(SUITE_TIMES, 'utf8')) as { seconds: Record<string, number> }).seconds;
  } catch {
    // none yet
  }
  for (const s of times.suites) if (s.seconds !== undefined && !s.failed) seconds[s.file] = Math.round(s.seconds * 10) / 10;
  const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
  const note = 'Wall seconds per suite on the 2-core CI machine (a suite under 5 s in a log: 2.5, since jest prints no time for it); `npm run test:times -- --write-times` merges a run in. test/sequencer.js starts the longest first.';
  writeFileSync(SUITE_TIMES, `${JSON.stringify({ note, seconds: sorted }, null, 2)}\n`);
  process.stderr.write(`wrote ${relative(ROOT, SUITE_TIMES)}\n`);
}

function option(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const value = argv[i + 1];
  argv.splice(i, 2);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const top = Number(option(argv, '--top') ?? 0) || undefined;
  const tests = Number(option(argv, '--tests') ?? 15);
  const from = option(argv, '--from');
  const writeTimes = argv.includes('--write-times');
  if (writeTimes) argv.splice(argv.indexOf('--write-times'), 1);
  mkdirSync(OUT_DIR, { recursive: true });
  let times: RunTimes;
  let code = 0;
  if (from) {
    const text = readFileSync(from, 'utf8');
    times = text.trimStart().startsWith('{') ? timesFromReport(JSON.parse(text) as JestReport) : timesFromLog(text);
  } else if (argv[0] === '--each') {
    // Each suite alone on one jest worker: its wall time and the core-seconds the machine spent meanwhile
    // (the suite, its dev server, its sandbox). A suite far below one core-second per second waits.
    times = { suites: [], slowestTests: [] };
    for (const file of argv.slice(1)) {
      const out = join(OUT_DIR, `each-${file.replace(/[^\w.-]+/g, '_')}.json`);
      const run = await runJest(['--maxWorkers=1', file], out, 'ignore');
      const one = timesFromReport(JSON.parse(readFileSync(out, 'utf8')) as JestReport);
      const report = JSON.parse(readFileSync(out, 'utf8')) as JestReport;
      // Each suite alone: the CPU of its own window (not the run's global setup) is its own and its server's.
      report.testResults.forEach((r, i) => times.suites.push({ ...one.suites[i], cpuSeconds: run.cpu.window(r.startTime, r.endTime)?.cpuSeconds }));
      times.slowestTests.push(...one.slowestTests);
      process.stderr.write(`${file}: ${times.suites.slice(-report.testResults.length).map((s) => `${s.seconds?.toFixed(1)} s, ${s.cpuSeconds?.toFixed(1)} core-s`).join('; ')}${run.code ? ' FAILED' : ''}\n`);
      if (run.code) code = run.code;
    }
  } else {
    const out = join(OUT_DIR, 'last.json');
    const args = argv.some((a) => a.startsWith('--maxWorkers') || a === '-i' || a === '--runInBand') ? argv : ['--maxWorkers=2', ...argv];
    const run = await runJest(args, out);
    code = run.code;
    times = { ...timesFromReport(JSON.parse(readFileSync(out, 'utf8')) as JestReport), cpuBusy: run.cpu.window(run.start, run.end)?.busy, cpuSeconds: run.cpu.window(run.start, run.end)?.cpuSeconds };
  }
  if (writeTimes) writeSuiteTimes(times);
  const table = formatTimes(times, { top, tests });
  if (!from) writeFileSync(join(OUT_DIR, 'last.txt'), `${table}\n`);
  process.stdout.write(`${table}\n`);
  return code;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`test-times: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(2);
    },
  );
}
