/**
 * What every command of the operator CLI is made of: the command's shape, the context the runner
 * (run.ts) hands it, and the steps several commands share (a card id argument, an idempotency key,
 * starting a flow and waiting for it, or not under --no-wait).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { keyErrors } from '../shared/card-rules';
import { UsageError, assertNoErrors, flag, type Flags } from './args';
import type { CardIssuingClient, FlowHandle } from '../client';
import type { Config } from '../config';

export interface CommandContext {
  /** The validated configuration (read once the line parses). */
  config(): Config;
  /** Connects on first use: parsing never needs Temporal. Every provider read goes through it (a worker's): the CLI holds no provider secret. */
  client(): Promise<CardIssuingClient>;
  progress(line: string): void;
  /** The flow being awaited: named on Ctrl-C and in a failure's output. */
  following(workflowId: string): void;
  /** False under --no-wait: a starting command prints the workflow ID it started and exits 0. */
  wait: boolean;
  /** A secret from the operator (a PIN): read from the terminal without echo (`confirm`: twice, the same), or one line of stdin; never printed. */
  readSecret(prompt: string, opts?: { confirm?: boolean }): Promise<string>;
  /** Where the outcome goes: JSON (--json), and whether stdout is a terminal (reveal prints a number only to one). */
  output: { json: boolean; terminal: boolean };
}

/** Why a command's outcome is not a success (exit 1): `error.type` under --json. */
export interface OutcomeFailure {
  type: string;
  message: string;
  details?: unknown[];
}

export interface CommandOutcome {
  /** false: the flow ended in a business failure (exit 1). */
  ok: boolean;
  workflowId?: string;
  result: unknown;
  /** For people (stdout without --json); defaults to the result's fields. */
  text?: string;
  /** When ok is false: what the failure was (default: type `BusinessFailure`). */
  failure?: OutcomeFailure;
}

export type OptionSpec = { type: 'string' | 'boolean'; multiple?: boolean };

export interface Command<P = unknown> {
  /** The command's words and flags, after `npm run starter -- ` (the runner adds `[--no-wait]` and `[--json]`). */
  usage: string;
  /** What it does, in one line: `--help` lists it beside the name, `<command> --help` under the usage. */
  description: string;
  /** One command line as an operator would type it, after `npm run starter -- `; its flags parse (test/unit/cli-help.test.ts). */
  example: string;
  options: Record<string, OptionSpec>;
  /** Name of the one positional argument the command takes, if any (e.g. ID). */
  positional?: string;
  /** How many positional words it takes (default 1); several reach `parse` joined by spaces. */
  positionals?: number;
  /** It starts a flow and waits for its outcome: it takes --no-wait (the runner adds the flag and `ctx.wait`). */
  starts?: boolean;
  parse(flags: Flags, positional: string | undefined, ctx: CommandContext): P | Promise<P>;
  run(plan: P, ctx: CommandContext): Promise<CommandOutcome>;
}

export const str: OptionSpec = { type: 'string' };
export const many: OptionSpec = { type: 'string', multiple: true };
export const bool: OptionSpec = { type: 'boolean' };

/** The spec gives card ids no format: anything a path segment can carry. */
const CARD_ID = /^[^\s/?#]{1,128}$/;

export function cardIdArg(value: string | undefined, what = 'ID'): string {
  if (!value) throw new UsageError(`${what} is required (a card id)`);
  if (!CARD_ID.test(value)) throw new UsageError(`${what} must be a card id: 1-128 characters without spaces, '/', '?' or '#' (got "${value}")`);
  return value;
}

/** The caller's key, or one drawn for this call: told, so a retry under `--key` joins this call instead of moving money again. */
export function keyFor(ctx: CommandContext, given: string | undefined): string {
  if (given !== undefined) return given;
  const drawn = `cli-${randomUUID()}`;
  ctx.progress(`idempotency key ${drawn}: to retry this call safely, repeat it with --key ${drawn}`);
  return drawn;
}

export function keyFlag(flags: Flags): string | undefined {
  const key = flag(flags, 'key');
  if (key !== undefined) assertNoErrors(keyErrors(key), { idempotencyKey: '--key' });
  return key;
}

/** What a flow's result means for the operator: success, or the failure to report (exit 1). */
export type Judge<R> = (result: R) => OutcomeFailure | undefined;

/**
 * Starts a flow and reports it; then waits for its result and judges it, or, under --no-wait,
 * answers the workflow ID at once (stdout: the ID alone, for scripts).
 */
export async function startedFlow<R>(ctx: CommandContext, start: Promise<FlowHandle<R>>, waitingFor: string, judge: Judge<R> = () => undefined): Promise<CommandOutcome> {
  const handle = await start;
  ctx.following(handle.workflowId);
  if (!ctx.wait) {
    ctx.progress(`started ${handle.workflowId}`);
    return leftRunning(ctx, handle.workflowId, { workflowId: handle.workflowId, runId: handle.runId });
  }
  ctx.progress(`started ${handle.workflowId}; waiting for ${waitingFor}`);
  const result = await handle.result();
  const failure = judge(result);
  return { ok: failure === undefined, workflowId: handle.workflowId, result, ...(failure ? { failure } : {}) };
}

/** --no-wait: the flow (or the card's operation) was started, or joined, and is left to run; stdout says its workflow ID alone. */
export function leftRunning(ctx: CommandContext, workflowId: string, result: Record<string, unknown>, how = `where it stands: npm run starter -- status ${workflowId}`): CommandOutcome {
  ctx.progress(`not waiting (--no-wait); ${how}`);
  return { ok: true, workflowId, result: { ...result, waited: false }, text: workflowId };
}

/**
 * A flag that carries personal data (an account number, a name, an email), given so that it stays out
 * of the process list and shell history when asked: `-` reads it as one line of stdin (or from the
 * terminal without echo), `@FILE` reads it from a file; any other value is taken as given. One flag
 * of a command line may read stdin.
 */
export async function personalFlag(flags: Flags, name: string, ctx: CommandContext, required: true): Promise<string>;
export async function personalFlag(flags: Flags, name: string, ctx: CommandContext, required?: false): Promise<string | undefined>;
export async function personalFlag(flags: Flags, name: string, ctx: CommandContext, required = false): Promise<string | undefined> {
  const given = required ? flag(flags, name, true) : flag(flags, name);
  if (given === undefined) return undefined;
  if (given === '-') {
    const fromStdin = Object.entries(flags).filter(([, v]) => v === '-').map(([k]) => `--${k}`);
    if (fromStdin.length > 1) throw new UsageError(`only one flag may read stdin (-): ${fromStdin.join(', ')} all ask for it; give the others as @FILE`);
    return (await ctx.readSecret(`--${name}: `)).trim();
  }
  if (given.startsWith('@')) {
    try {
      return readFileSync(given.slice(1), 'utf8').trim();
    } catch (err) {
      throw new UsageError(`--${name} ${given} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return given;
}
