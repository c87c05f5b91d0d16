/**
 * The Temporal SDK's logs, the TypeScript side's and the Rust core's alike, through our one
 * logger (JSON, levels, redaction). The core retries every poll while Temporal is away and warns
 * on each retry: thousands of identical lines in a ten-minute outage. Two gates turn that into a
 * few lines that say what is down and since when:
 * - a core line about the connection to Temporal (a transport error, `Unavailable`, a refused
 *   connection) opens an outage: one `Temporal unreachable` line with the address and `since`;
 *   while it lasts, one `Temporal still unreachable` line a minute with how many lines it stood
 *   for; once the core has logged nothing about the connection for a quiet period and the
 *   frontend answers a health check, one `Temporal reachable again` line with the outage's length;
 * - any other line repeated (same level, origin and text, digits aside) is written once a minute
 *   at most, the next one carrying how many it stood for and since when.
 */
import { DefaultLogger, makeTelemetryFilterString, type LogEntry, type LogLevel as SdkLogLevel } from '@temporalio/worker';
import type { Logger, LogLevel } from '../logging';

export interface SdkLogOptions {
  /** The Temporal frontend the process talks to, named in the outage lines. */
  temporalAddress: string;
  /** How often a repeated line, or a still-open outage, is written again (default 60 s). */
  repeatEveryMs?: number;
  /** How long without a connection complaint before the probe is asked whether the outage is over (default 10 s). */
  quietMs?: number;
  /** Whether the frontend answers now (observability/server.ts temporalReachable); without one, quiet alone closes an outage. */
  probe?: () => Promise<boolean>;
  now?: () => number;
}

const OUR_LEVEL: Record<SdkLogLevel, LogLevel> = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };
const SDK_LEVEL: Record<LogLevel, SdkLogLevel> = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' };

/** What the core says when it cannot reach (or lost) the frontend; matched on the line's text and fields. */
const CONNECTION_TROUBLE = /transport error|tcp connect error|connection refused|Unavailable|connection reset|broken pipe|dns error|channel closed|error trying to connect/i;

export interface ForwardedSdkLogs {
  /** The SDK Runtime's `logger`. */
  logger: DefaultLogger;
  /** The Runtime's `telemetryOptions.logging`: the core's lines forwarded to `logger`. */
  logging: { filter: string; forward: Record<string, never> };
  /** Writes what the gates still hold (a closing outage line); call before exit. */
  flush(): void;
}

export function forwardSdkLogs(log: Logger, level: LogLevel, opts: SdkLogOptions): ForwardedSdkLogs {
  const gate = new SdkLogGate(log, opts);
  return {
    logger: new DefaultLogger(SDK_LEVEL[level], (entry) => gate.write(entry)),
    // The core at WARN (its retries and failures), its dependencies at ERROR; debug shows the core's INFO.
    logging: { filter: makeTelemetryFilterString({ core: level === 'debug' ? 'INFO' : 'WARN', other: 'ERROR' }), forward: {} },
    flush: () => gate.flush(),
  };
}

interface Repeat {
  firstAt: number;
  lastWrittenAt: number;
  held: number;
}

interface Outage {
  since: number;
  lastSeenAt: number;
  lastWrittenAt: number;
  held: number;
  lastError: string;
}

/** Exported for its unit test; use forwardSdkLogs. */
export class SdkLogGate {
  private readonly repeats = new Map<string, Repeat>();
  private outage: Outage | undefined;
  private readonly every: number;
  private readonly quiet: number;
  private readonly now: () => number;
  private quietTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly opts: SdkLogOptions,
  ) {
    this.every = opts.repeatEveryMs ?? 60_000;
    this.quiet = opts.quietMs ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  write(entry: LogEntry): void {
    const meta = (entry.meta ?? {}) as Record<string, unknown>;
    if (meta.sdkComponent === 'core' && isConnectionTrouble(entry.message, meta)) return this.trouble(entry.message, meta);
    this.repeated(entry, meta);
  }

  /** At shutdown: an outage still open gets its last line (how long, how many lines it stood for). */
  flush(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = undefined;
    const o = this.outage;
    if (!o) return;
    this.outage = undefined;
    this.log.warn('Temporal still unreachable at shutdown', {
      temporalAddress: this.opts.temporalAddress,
      since: iso(o.since),
      downForS: Math.round((this.now() - o.since) / 1000),
      linesHeld: o.held,
      lastError: o.lastError,
    });
  }

  private trouble(message: string, meta: Record<string, unknown>): void {
    const at = this.now();
    const lastError = errorText(message, meta);
    const fields = () => ({ temporalAddress: this.opts.temporalAddress, since: iso(this.outage!.since), lastError, sdkComponent: 'core' });
    if (!this.outage) {
      this.outage = { since: at, lastSeenAt: at, lastWrittenAt: at, held: 0, lastError };
      this.log.warn('Temporal unreachable: the worker cannot poll or complete tasks until it is back', fields());
    } else if (at - this.outage.lastWrittenAt >= this.every) {
      this.log.warn('Temporal still unreachable', { ...fields(), downForS: Math.round((at - this.outage.since) / 1000), linesHeld: this.outage.held });
      Object.assign(this.outage, { lastWrittenAt: at, held: 0 });
    } else {
      this.outage.held++;
    }
    Object.assign(this.outage, { lastSeenAt: at, lastError });
    this.armQuietTimer();
  }

  private armQuietTimer(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => {
      this.quietTimer = undefined;
      // The core backs its retries off, so silence alone may only be a long pause between them.
      const probe = this.opts.probe ?? (async () => true);
      void probe()
        .catch(() => false)
        .then((up) => {
          if (!this.outage || this.quietTimer) return;
          if (up) this.recovered();
          else this.armQuietTimer();
        });
    }, this.quiet);
    this.quietTimer.unref();
  }

  private recovered(): void {
    const o = this.outage!;
    this.outage = undefined;
    this.log.info('Temporal reachable again', {
      temporalAddress: this.opts.temporalAddress,
      since: iso(o.since),
      lastErrorAt: iso(o.lastSeenAt),
      downForS: Math.round((o.lastSeenAt - o.since) / 1000),
      linesHeld: o.held,
    });
  }

  private repeated(entry: LogEntry, meta: Record<string, unknown>): void {
    const at = this.now();
    const key = `${entry.level} ${String(meta.target ?? meta.sdkComponent ?? '')} ${entry.message.replace(/\d+/g, '#')}`;
    const seen = this.repeats.get(key);
    const write = (extra: Record<string, unknown>) => this.log[OUR_LEVEL[entry.level]](entry.message, { ...meta, ...extra });
    if (!seen || at - seen.lastWrittenAt >= this.every * 10) {
      this.repeats.set(key, { firstAt: at, lastWrittenAt: at, held: 0 });
      if (this.repeats.size > 1000) this.repeats.delete(this.repeats.keys().next().value!);
      return write({});
    }
    if (at - seen.lastWrittenAt < this.every) {
      seen.held++;
      return;
    }
    write({ repeatedSince: iso(seen.firstAt), linesHeld: seen.held });
    Object.assign(seen, { lastWrittenAt: at, held: 0 });
  }
}

function isConnectionTrouble(message: string, meta: Record<string, unknown>): boolean {
  return CONNECTION_TROUBLE.test(message) || CONNECTION_TROUBLE.test(errorText('', meta));
}

/** The error the core attached (a field `error`, or the message itself), kept short. */
function errorText(message: string, meta: Record<string, unknown>): string {
  const err = meta.error ?? meta.err ?? meta.source;
  const text = err === undefined ? message : typeof err === 'string' ? err : JSON.stringify(err);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

const iso = (ms: number) => new Date(ms).toISOString();
