/**
 * `npm test`, after provisioning (tools/provision.ts): the type-check and the lint side by side (each
 * takes one core; one after the other they were ≈ 75 s of the critical path), then, when both pass,
 * jest on JEST_WORKERS workers. Each check's output is printed whole when it ends; jest's as it goes.
 * Exit 1 when any failed. Arguments go to jest.
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
  if (results.every((r) => r.code === 0)) results.push(await run({ name: 'jest', bin: 'jest/bin/jest.js', args: [...workers, ...jestArgs], buffered: false }));
  process.stderr.write(`\n${results.map((r) => `${r.name}: ${r.code === 0 ? 'passed' : 'FAILED'} (${r.seconds.toFixed(0)} s)`).join('\n')}\n`);
  return results.every((r) => r.code === 0) ? 0 : 1;
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
