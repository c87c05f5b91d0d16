/**
 * `npm test`, after provisioning (tools/provision.ts): the type-check and the lint side by side (each
 * takes one core; one after the other they were ≈ 75 s of the critical path), then, when both pass,
 * jest on JEST_WORKERS workers, and beside it a second jest for the WAITING_SUITES. Each check's
 * output is printed whole when it ends, and so is the waiting lane's; the main jest's as it goes.
 * Exit 1 when any failed. Arguments go to jest; with a test path among them, one jest runs them all.
 * (Starting the checks beside the jests saves ≈ 20 s but a failed check then has to stop jest's own
 * worker processes, which outlive a SIGTERM to jest: not done.)
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
/**
 * Jest workers: two, one per core. Four were tried (each suite alone uses about 0.4 core-seconds per
 * second, docs/testing.md): two fresh-clone runs on this 2-core machine took jest 927 s (other work
 * beside it) and 875 s (nothing beside it), no faster than two workers' 844-990 s, since the suites
 * share one dev server and its CPU; and each run failed on load (a JVM that missed its 5 s start, a
 * provider clock overtaking a test's expectation, a 180 s hang).
 */
export const JEST_WORKERS = 2;

/**
 * Suites that wait on their scenario more than they compute (docs/testing.md, "Where the time goes":
 * at most 0.6 core-seconds per second): an outage of a dev server of their own, a rollout's soak, a
 * provider holding money PROCESSING for seconds while an owner is terminated or a deadline passes, a
 * CLI child process or a Go caller started and waited for. On the two main workers each held a slot
 * for a minute while the cores idled; in a lane of their own (a second jest, with its own dev server)
 * they run beside the suites that compute.
 */
export const WAITING_SUITES = [
  'test/money-edges/books-soak.test.ts',
  'test/money-edges/waiting.test.ts',
  'test/bridge/temporal-outage.test.ts',
  'test/observability/worker-outage-logs.test.ts',
  'test/deploy/rollout.test.ts',
  'test/money-edges/attempts.test.ts',
  'test/money-edges/open-items.test.ts',
  'test/money-edges/answers.test.ts',
  'test/money-edges/restarts.test.ts',
  'test/reconciliation/reconciliation.test.ts',
  'test/workflows/send-payout.test.ts',
  'test/workflows/money-movement.test.ts',
  'test/fidelity/flows.test.ts',
  'test/starter/cli.test.ts',
  'test/nexus/callers.test.ts',
];
/** Three: the lane's suites wait, so three at a time still leave the cores to the main jest's two. */
const WAITING_LANE_WORKERS = 3;

interface Step {
  name: string;
  bin: string;
  args: string[];
  /** Buffered and printed when the step ends, so that its lines do not interleave with jest's. */
  buffered: boolean;
}

function run(step: Step): Promise<{ name: string; code: number; seconds: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [join(ROOT, 'node_modules', step.bin), ...step.args], { cwd: ROOT, stdio: step.buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  const out: Buffer[] = [];
  child.stdout?.on('data', (b: Buffer) => out.push(b));
  child.stderr?.on('data', (b: Buffer) => out.push(b));
  return new Promise((resolve) => {
    child.on('error', (err) => {
      out.push(Buffer.from(`${err.message}\n`));
      resolve({ name: step.name, code: 1, seconds: (Date.now() - started) / 1000 });
    });
    child.on('close', (code) => {
      const seconds = (Date.now() - started) / 1000;
      if (step.buffered) process.stderr.write(`\n${step.name}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${seconds.toFixed(0)} s\n${Buffer.concat(out).toString()}`);
      resolve({ name: step.name, code: code ?? 1, seconds });
    });
  });
}

async function main(jestArgs: string[]): Promise<number> {
  const workers = jestArgs.some((a) => a.startsWith('--maxWorkers') || a === '-i' || a === '--runInBand') ? [] : [`--maxWorkers=${JEST_WORKERS}`];
  const results = await Promise.all([
    run({ name: 'type-check (tsc -p tsconfig.json --noEmit)', bin: 'typescript/bin/tsc', args: ['-p', 'tsconfig.json', '--noEmit'], buffered: true }),
    run({ name: 'lint (eslint src test tools)', bin: 'eslint/bin/eslint.js', args: ['src', 'test', 'tools'], buffered: true }),
  ]);
  // A change that does not type-check or lint gets its answer now, not after the suites.
  if (results.every((r) => r.code === 0)) results.push(...(await Promise.all(jestRuns(workers, jestArgs).map(run))));
  process.stderr.write(`\n${results.map((r) => `${r.name}: ${r.code === 0 ? 'passed' : 'FAILED'} (${r.seconds.toFixed(0)} s)`).join('\n')}\n`);
  return results.every((r) => r.code === 0) ? 0 : 1;
}

/** The main jest, and the waiting lane's beside it when the whole suite runs (no test path among the arguments). */
function jestRuns(workers: string[], jestArgs: string[]): Step[] {
  const jest = (name: string, args: string[], buffered: boolean): Step => ({ name, bin: 'jest/bin/jest.js', args, buffered });
  if (jestArgs.some((a) => !a.startsWith('-'))) return [jest('jest', [...workers, ...jestArgs], false)];
  const ignored = WAITING_SUITES.map((path) => `<rootDir>/${path.replace(/[.]/g, '\\.')}$`);
  return [
    jest('jest', [...workers, ...jestArgs, '--testPathIgnorePatterns', ...ignored], false),
    jest('jest, waiting lane', [`--maxWorkers=${WAITING_LANE_WORKERS}`, ...jestArgs, '--runTestsByPath', ...WAITING_SUITES], true),
  ];
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`test: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(2);
    },
  );
}
