/**
 * The CLI runner: picks the command, parses its flags (node:util parseArgs, strict), validates,
 * and only then connects and runs. Exit codes (CONTRACTS §6): 0 success; 1 the flow ended in a
 * business failure (a rejected KYC, a failed payout, a conflict), or was cancelled, terminated or
 * timed out; 2 bad input, nothing started; 3 the CLI could not do its job (Temporal or the provider
 * unreachable, credentials refused); 4 OutcomeUnknown: money may have moved, settle it.
 */
import { parseArgs } from 'node:util';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Config } from '../config';
import { startTracing, type Tracing } from '../observability/tracing';
import { createProviderClient, type ProviderClient } from '../provider/client';
import { UsageError, type Flags } from './args';
import { ANY_FLOW_FAILURES, isCardIssuingError, type CardIssuingClient, type CardIssuingError } from '../client';
import { createCardIssuingClient } from './connect';
import { COMMANDS, defaultText, type Command, type CommandContext, type CommandOutcome } from './commands';

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
}

const processIo: CliIo = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };

/** Runs one command line; resolves the exit code. `config` is loaded only once the line parses. */
export async function runCli(argv: string[], loadConfig: () => Config, io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stderr(usage());
    return name ? EXIT.ok : EXIT.badInput;
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
      io.stderr(`usage: npm run starter -- ${command.usage} [--json]\n`);
      return EXIT.ok;
    }
    session.json = json;
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
      options: { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
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
  #provider?: ProviderClient;
  #config?: Config;
  #workflowId?: string;
  readonly context: CommandContext;

  constructor(
    private readonly name: string,
    private readonly io: CliIo,
    private readonly loadConfig: () => Config,
  ) {
    this.context = {
      client: () => (this.#client ??= this.#connect()),
      provider: () => (this.#provider ??= createProviderClient(this.config().provider)),
      progress: (line) => this.io.stderr(`${this.name}: ${line}\n`),
      following: (workflowId) => {
        this.#workflowId = workflowId;
        this.io.following?.(workflowId);
      },
    };
  }

  config(): Config {
    return (this.#config ??= this.loadConfig());
  }

  #connect(): Promise<CardIssuingClient> {
    this.#tracing = startTracing(this.config().tracing, 'card-issuing-starter');
    return createCardIssuingClient(this.config(), { tracing: this.#tracing });
  }

  report(outcome: CommandOutcome): number {
    const workflowId = outcome.workflowId ?? this.#workflowId;
    if (this.json) this.io.stdout(`${JSON.stringify({ ok: outcome.ok, command: this.name, ...(workflowId ? { workflowId } : {}), result: outcome.result })}\n`);
    else this.io.stdout(`${defaultText(outcome)}\n`);
    if (!outcome.ok) this.context.progress('the flow ended in a business failure');
    return outcome.ok ? EXIT.ok : EXIT.businessFailure;
  }

  fail(err: unknown): number {
    if (err instanceof UsageError) return this.#failed(EXIT.badInput, { type: 'UsageError', message: err.message });
    if (isCardIssuingError(err)) {
      const workflowId = err.workflowId ?? this.#workflowId;
      this.context.progress(`failed: ${err.type}: ${err.message}`);
      const code = exitCodeOf(err);
      if (code === EXIT.outcomeUnknown) this.context.progress(`money may have moved: settle it with npm run starter -- settle ${workflowId ?? err.idempotencyKey ?? 'WORKFLOW_ID'}`);
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
    await this.#provider?.close().catch(() => undefined);
    const client = await this.#client?.catch(() => undefined);
    await client?.close().catch(() => undefined);
    await this.#tracing?.shutdown().catch(() => undefined);
  }
}

function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  ${c.usage}`);
  return `usage: npm run starter -- <command> [flags] [--json]\n\n${lines.join('\n')}\n\nProgress goes to stderr; --json prints the result as one JSON object on stdout.\nExit: 0 success, 1 business failure (or cancelled, terminated, timed out), 2 bad input (nothing started), 3 Temporal or the provider unreachable, 4 OutcomeUnknown (money may have moved: settle it).\nA business failure prints its type; the types each flow may end with: docs/provider-fidelity.md, "Failure types".\n`;
}
