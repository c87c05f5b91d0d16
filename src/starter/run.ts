/**
 * The CLI runner: picks the command, parses its flags (node:util parseArgs, strict), validates,
 * and only then connects and runs. Exit codes (CONTRACTS §6): 0 success; 1 the flow ended in a
 * business failure (a rejected KYC, a failed payout, a conflict), or was cancelled, terminated or
 * timed out; 2 bad input, nothing started; 3 the CLI could not do its job (Temporal or the provider
 * unreachable, credentials refused); 4 OutcomeUnknown: money may have moved, settle it.
 * The CLI talks to Temporal only: every provider read is a worker's (a read flow), so an
 * operator's machine holds no provider secret.
 */
import { parseArgs } from 'node:util';
import { WorkflowNotFoundError } from '@temporalio/common';
import { ConfigError, type Config } from '../config';
import { startTracing, type Tracing } from '../observability/tracing';
import { UsageError, type Flags } from './args';
import { ANY_FLOW_FAILURES, isCardIssuingError, type CardIssuingClient, type CardIssuingError } from '../client';
import { createCardIssuingClient } from './connect';
import { COMMANDS, defaultText, type Command, type CommandContext, type CommandOutcome } from './commands';
import { readSecretFromStdin } from './secret-input';

export const EXIT = { ok: 0, businessFailure: 1, badInput: 2, unavailable: 3, outcomeUnknown: 4 } as const;

/** Failures that say money may have moved (exit 4: settle it). */
const UNKNOWN_OUTCOMES: readonly string[] = ['OutcomeUnknown', 'SubmissionOutcomeUnknown'];
/** Failures that say Temporal or the provider could not be reached, or refused our credentials (exit 3). */
const UNREACHABLE: readonly string[] = [...ANY_FLOW_FAILURES.filter((t) => t !== 'IdempotencyInProgress'), 'ClientTimeout'];

/** The exit code of a failure (CONTRACTS §6). */
export function exitCodeOf(err: CardIssuingError): number {
  if (UNKNOWN_OUTCOMES.includes(err.type)) return EXIT.outcomeUnknown;
  if (UNREACHABLE.includes(err.type)) return EXIT.unavailable;
  return EXIT.businessFailure;
}

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Told which flow the command is waiting for (the entry names it on Ctrl-C). */
  following?(workflowId: string): void;
  /** Reads a secret (a PIN) from the operator; default: the terminal without echo, or one line of stdin. */
  readSecret?(prompt: string, opts?: { confirm?: boolean }): Promise<string>;
  /** True when stdout is a terminal (a person reads it, no file or pipe keeps it). */
  stdoutIsTerminal?: boolean;
}

const processIo: CliIo = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), stdoutIsTerminal: process.stdout.isTTY === true };

/** Runs one command line; resolves the exit code. `config` is loaded only once the line parses. */
export async function runCli(argv: string[], loadConfig: () => Config, io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    // `help COMMAND`: that command's flags; a name that is no command is bad input.
    const asked = rest[0] === undefined ? undefined : COMMANDS[rest[0]];
    if (rest[0] !== undefined && !asked) {
      io.stderr(`starter: unknown command "${rest[0]}" (commands: ${Object.keys(COMMANDS).join(', ')})\n`);
      return EXIT.badInput;
    }
    // Help asked for is the answer (stdout, exit 0, so `| less` works); no command at all is bad input, told on stderr.
    if (!name) {
      io.stderr(usage());
      return EXIT.badInput;
    }
    io.stdout(asked ? commandHelp(rest[0], asked) : usage());
    return EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(`starter: unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(', ')})\n`);
    return EXIT.badInput;
  }
  const session = new Session(name, io, loadConfig);
  try {
    const { flags, positional, json } = parseLine(name, command, rest);
    if (flags.help) {
      io.stdout(commandHelp(name, command));
      return EXIT.ok;
    }
    session.json = json;
    session.context.output = { json, terminal: io.stdoutIsTerminal === true };
    session.context.wait = flags['no-wait'] !== true;
    const plan = await command.parse(flags, positional, session.context);
    return session.report(await command.run(plan, session.context));
  } catch (err) {
    return session.fail(err);
  } finally {
    await session.close();
  }
}

function parseLine(name: string, command: Command, args: string[]): { flags: Flags; positional?: string; json: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...command.options, ...(command.starts ? { 'no-wait': { type: 'boolean' as const } } : {}), json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.positional !== undefined,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(parseArgsMessage(err as Error & { code?: string }));
  }
  const most = command.positionals ?? 1;
  if (parsed.positionals.length > most) throw new UsageError(`${name} takes ${most === 1 ? 'one' : `at most ${most}`} ${command.positional}, got ${parsed.positionals.length}`);
  return { flags: parsed.values as Flags, positional: parsed.positionals.length > 0 ? parsed.positionals.join(' ') : undefined, json: parsed.values.json === true };
}

/** node's messages are long and suggest `--` tricks; keep the part that names the flag. */
function parseArgsMessage(err: Error & { code?: string }): string {
  const option = /'(-[^']+)'/.exec(err.message)?.[1]?.split(' ')[0];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown flag ${option}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument: ${/'([^']+)'/.exec(err.message)?.[1] ?? err.message} (this command takes flags only)`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return option ? `${option} needs a value (write ${option}=VALUE for a value starting with -)` : err.message;
    default:
      return err.message.split('. ')[0];
  }
}

/** One run's connections, output and the flow being followed. */
class Session {
  json = false;
  #client?: Promise<CardIssuingClient>;
  #tracing?: Tracing;
  #config?: Config;
  #workflowId?: string;
  readonly context: CommandContext;

  constructor(
    private readonly name: string,
    private readonly io: CliIo,
    private readonly loadConfig: () => Config,
  ) {
    this.context = {
      config: () => this.config(),
      client: () => (this.#client ??= this.#connect()),
      progress: (line) => this.io.stderr(`${this.name}: ${line}\n`),
      following: (workflowId) => {
        this.#workflowId = workflowId;
        this.io.following?.(workflowId);
      },
      wait: true,
      readSecret: (prompt, opts) => (this.io.readSecret ?? readSecretFromStdin)(prompt, opts),
      output: { json: false, terminal: false },
    };
  }

  config(): Config {
    return (this.#config ??= this.loadConfig());
  }

  #connect(): Promise<CardIssuingClient> {
    this.#tracing = startTracing(this.config().tracing, 'card-issuing-starter');
    return createCardIssuingClient(this.config(), { tracing: this.#tracing });
  }

  /** The command's outcome: its result, and when it is a business failure (exit 1) the error too, as every failure's JSON has it. */
  report(outcome: CommandOutcome): number {
    const workflowId = outcome.workflowId ?? this.#workflowId;
    const failure = outcome.ok ? undefined : (outcome.failure ?? { type: 'BusinessFailure', message: 'the flow ended in a business failure' });
    const error = failure && { type: failure.type, message: failure.message, details: failure.details ?? [], ...(workflowId ? { workflowId } : {}) };
    if (this.json) this.io.stdout(`${JSON.stringify({ ok: outcome.ok, command: this.name, ...(workflowId ? { workflowId } : {}), result: outcome.result, ...(error ? { error } : {}) })}\n`);
    else this.io.stdout(`${defaultText(outcome)}\n`);
    if (failure) this.context.progress(`the flow ended in a business failure: ${failure.type}: ${failure.message}`);
    return outcome.ok ? EXIT.ok : EXIT.businessFailure;
  }

  fail(err: unknown): number {
    if (err instanceof UsageError) return this.#failed(EXIT.badInput, { type: 'UsageError', message: err.message });
    // The configuration is read once the line parses: a bad variable is bad input too, and nothing was started.
    if (err instanceof ConfigError) return this.#failed(EXIT.badInput, { type: 'ConfigError', message: err.message });
    if (isCardIssuingError(err)) {
      const workflowId = err.workflowId ?? this.#workflowId;
      this.context.progress(`failed: ${err.type}: ${err.message}`);
      const code = exitCodeOf(err);
      if (code === EXIT.outcomeUnknown) {
        // A card's money update is no flow of its own to settle: reconcile-money reads its key among the card's movements.
        if (err.updateId === undefined) this.context.progress(`money may have moved: settle it with npm run starter -- settle ${workflowId ?? err.idempotencyKey ?? 'WORKFLOW_ID'}`);
        else this.context.progress(`money may have moved (update ${err.updateId} of ${workflowId}): reconcile-money compares its key with the provider's record`);
        if (err.idempotencyKey) this.context.progress(`the provider's record of its key: npm run starter -- operation ${err.idempotencyKey}`);
      }
      return this.#failed(code, { type: err.type, message: err.message, details: err.details, ...(workflowId ? { workflowId } : {}) }, false);
    }
    if (err instanceof WorkflowNotFoundError) return this.#failed(EXIT.badInput, { type: 'FlowNotFound', message: `no flow ${err.workflowId} (unknown ID?)`, workflowId: err.workflowId });
    return this.#failed(EXIT.unavailable, { type: 'Unavailable', message: `could not complete: ${(err as Error)?.message ?? String(err)}` });
  }

  /** One line on stderr (unless told already) and, under --json, the one object on stdout: `{ ok: false, error }`. */
  #failed(code: number, error: { type: string; message: string; details?: readonly unknown[]; workflowId?: string }, say = true): number {
    if (say) this.io.stderr(`starter ${this.name}: ${error.message}\n`);
    if (this.json) {
      const workflowId = error.workflowId ?? this.#workflowId;
      this.io.stdout(`${JSON.stringify({ ok: false, command: this.name, ...(workflowId ? { workflowId } : {}), error: { details: [], ...error, ...(workflowId ? { workflowId } : {}) } })}\n`);
    }
    return code;
  }

  async close(): Promise<void> {
    const client = await this.#client?.catch(() => undefined);
    await client?.close().catch(() => undefined);
    await this.#tracing?.shutdown().catch(() => undefined);
  }
}

/** A command's usage line with the flags every command (and every starting one) takes, before its note in parentheses if it has one. */
function usageOf(command: Command): string {
  const [words, note] = command.usage.split(/ {3}(?=\()/);
  return `${words}${command.starts ? ' [--no-wait]' : ''} [--json]${note ? `   ${note}` : ''}`;
}

/** `<command> --help` (or `--help COMMAND`): its usage, what it does, and one example. */
function commandHelp(name: string, command: Command): string {
  return `usage: npm run starter -- ${usageOf(command)}

${command.description}

example: npm run starter -- ${command.example}
`;
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.description}`);
  return `usage: npm run starter -- <command> [flags] [--json]
       npm run starter -- <command> --help   (its flags, and an example)

${lines.join('\n')}

Progress goes to stderr; --json prints the result as one JSON object on stdout, also on failure: { "ok": false, "error": { type, message, details, workflowId } }.
--no-wait (the commands that start a flow): print the workflow ID and exit 0 without waiting for the outcome.
pin reads the new PIN from the terminal without echo (twice), or one line of stdin: never from a flag, never printed; it is sealed to the workers' PIN_SEAL_PUBLIC_KEY before it leaves.
reveal prints the full card number only to a terminal; under --json only with --show-number.
cancel and terminate record --reason in the flow's history as plain text (no personal data); status shows who stopped a flow and why.
Exit: 0 success, 1 business failure (or cancelled, terminated, timed out), 2 bad input (nothing started), 3 Temporal or the provider unreachable, 4 OutcomeUnknown (money may have moved: settle it), 130 interrupted while waiting (the flow keeps running: status WORKFLOW_ID).
The CLI needs Temporal, the codec key and, to send a PIN, the workers' PIN_SEAL_PUBLIC_KEY: the provider is read by the workers (no PROVIDER_API_SECRET here). Against the demo's stack (npm run demo -- --keep), paste the export lines it prints: they set CARD_ISSUING_DEVELOPMENT=true, without which the development keys are refused.
Every command with its client method and workflow: docs/cli.md.
A business failure prints its type; the types each flow may end with: docs/provider-fidelity.md, "Failure types".
`;
}
