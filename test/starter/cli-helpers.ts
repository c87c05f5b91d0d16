/** Running the operator CLI in tests: as a child process (its real entry, environment and stdin) or through its runner in this process. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Config } from '../../src/config';
import { runCli as runCliInProcess, type CliIo } from '../../src/starter/run';
import type { Stack } from '../helpers/stack';

const ROOT = join(__dirname, '..', '..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ChildOptions {
  /** Variables over the stack's (a value undefined removes the variable). */
  env?: Record<string, string | undefined>;
  /** Written to the CLI's stdin, which is then closed. */
  stdin?: string;
}

/** The CLI's entry (src/starter/cli.ts) as an operator runs it, configured by environment for the stack. */
export function runChild(stack: Stack, args: string[], opts: ChildOptions = {}): Promise<CliRun> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TEMPORAL_ADDRESS: stack.config.temporal.address,
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
    PROVIDER_BASE_URL: stack.sandboxUrl,
    PAYLOAD_CODEC_KEY: stack.config.codec.key,
    PAYLOAD_CODEC_KEY_ID: stack.config.codec.keyId,
    // An operator's machine holds the workers' PIN public key, never its private half.
    PIN_SEAL_PUBLIC_KEY: stack.config.pin.publicKey,
    PIN_SEAL_KEY_ID: stack.config.pin.keyId,
    ...opts.env,
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, 'src/starter/cli.ts'), ...args], { cwd: ROOT, env: env as NodeJS.ProcessEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (opts.stdin !== undefined) child.stdin.write(opts.stdin);
    child.stdin.end();
  });
}

export interface InProcessOptions {
  /** The configuration the CLI loads (default: the stack's). */
  config?: Config;
  readSecret?: CliIo['readSecret'];
  /** Told the workflow ID the command follows, as soon as it does. */
  following?: CliIo['following'];
  /** stdout is a terminal (default: it is not, as in CI). */
  terminal?: boolean;
}

/** The same command line through the CLI's runner in this process: what it prints and exits with, without a process to start. */
export async function runInProcess(stack: Stack, args: string[], opts: InProcessOptions = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), ...(opts.readSecret ? { readSecret: opts.readSecret } : {}), ...(opts.following ? { following: opts.following } : {}), stdoutIsTerminal: opts.terminal === true };
  const code = await runCliInProcess(args, () => opts.config ?? stack.config, io);
  return { code, stdout, stderr };
}

/** The one JSON object --json prints (exactly one line on stdout). */
export function jsonOf(run: CliRun): any {
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}
