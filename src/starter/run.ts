/**
 * The CLI runner: picks the command, parses its flags (node:util parseArgs, strict), validates,
 * and only then connects and runs. Exit codes (CONTRACTS §6): 0 success; 1 the flow ended in a
 * business failure (any workflow ApplicationFailure, a rejected KYC, a failed payout);
 * 2 bad input, nothing started; 3 the CLI could not do its job (Temporal or the provider unreachable).
 */
import { parseArgs } from 'node:util';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Config } from '../config';
import { startTracing, type Tracing } from '../observability/tracing';
import { createProviderClient, type ProviderClient } from '../provider/client';
import { UsageError, type Flags } from './args';
import { isCardIssuingError, type CardIssuingClient } from '../client';
import { createCardIssuingClient } from './connect';
import { COMMANDS, defaultText, type Command, type CommandContext, type CommandOutcome } from './commands';

export const EXIT = { ok: 0, businessFailure: 1, badInput: 2, unavailable: 3 } as const;

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
    if (err instanceof UsageError) {
      this.io.stderr(`starter ${this.name}: ${err.message}\n`);
      return EXIT.badInput;
    }
    if (isCardIssuingError(err)) {
      const summary = { type: err.type, message: err.message, ...(err.fieldErrors ? { errors: err.fieldErrors } : {}) };
      if (this.json) this.io.stdout(`${JSON.stringify({ ok: false, command: this.name, ...(this.#workflowId ? { workflowId: this.#workflowId } : {}), failure: summary })}\n`);
      this.context.progress(`failed: ${summary.type}: ${summary.message}`);
      return EXIT.businessFailure;
    }
    if (err instanceof WorkflowNotFoundError) {
      this.io.stderr(`starter ${this.name}: no flow ${err.workflowId} (unknown ID?)\n`);
      return EXIT.badInput;
    }
    this.io.stderr(`starter ${this.name}: could not complete: ${(err as Error)?.message ?? String(err)}\n`);
    return EXIT.unavailable;
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
  return `usage: npm run starter -- <command> [flags] [--json]\n\n${lines.join('\n')}\n\nProgress goes to stderr; --json prints the result as one JSON object on stdout.\nExit: 0 success, 1 business failure, 2 bad input (nothing started), 3 Temporal or the provider unreachable.\nA business failure prints its type; the types each flow may end with: docs/provider-fidelity.md, "Failure types".\n`;
}
