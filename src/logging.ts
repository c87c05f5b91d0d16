/**
 * One structured logger for every process: pino, JSON lines on stderr, LOG_LEVEL honoured.
 * Redaction is configured here once: fields that may carry secrets, card data or identity
 * data are censored by name wherever they appear (two levels deep), the names that mean
 * identity data only inside a KYC form (`address`, `city`…) by path, and every message and
 * string field is scrubbed of anything that looks like a PAN and of the secrets this process
 * knows. Callers still pass only what is safe to keep (ids, types, statuses, timings).
 */
import pino from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const CENSOR = '[REDACTED]';

/** Field names whose values never reach a log line, wherever they are (two levels deep). */
const SENSITIVE_FIELDS = [
  'cardNumber', 'pan', 'cvv', 'cvc', 'expiryMonth', 'expiryYear', 'pin',
  'idNumber', 'idFrontToken', 'idBackToken', 'selfieToken', 'addressProofToken', 'birthDate', 'fullName', 'fullNameEn',
  'street', 'mobile', 'email', 'payeeAccountNo', 'billingAddress',
  'secret', 'apiSecret', 'webhookSecret', 'authorization', 'x-signature', 'key', 'token',
];
/**
 * Names that are identity data in one place and not in another: a KYC form's `address` is a
 * person's home, a worker's `address` is the Temporal frontend an operator needs to read. These
 * are censored by path: in the objects that carry a KYC form (the provider request `body`, a
 * workflow `input`, a `form`), at the top of a line or one or two levels down.
 */
const KYC_PLACE_FIELDS = ['address', 'addressEn', 'city', 'state', 'postalCode'];
const KYC_CONTAINERS = ['form', 'body', 'input'];
const byName = (f: string) => {
  const key = /^[A-Za-z_$][\w$]*$/.test(f) ? `.${f}` : `["${f}"]`;
  return [key.startsWith('.') ? f : key, `*${key}`, `*.*${key}`];
};
const REDACT_PATHS = [
  ...SENSITIVE_FIELDS.flatMap(byName),
  ...KYC_CONTAINERS.flatMap((c) => KYC_PLACE_FIELDS.flatMap((f) => [`${c}.${f}`, `*.${c}.${f}`, `*.*.${c}.${f}`])),
];

/** 13 to 19 digits, optionally grouped: the shape of a card number. */
const PAN_LIKE = /\b(?:\d[ -]?){12,18}\d\b/g;

export interface LoggerOptions {
  level?: LogLevel;
  /** Secret values to scrub from any string (e.g. PROVIDER_API_SECRET). */
  secrets?: readonly string[];
  /** Where lines go; stderr by default. */
  write?: (line: string) => void;
}

export function createLogger(component: string, opts: LoggerOptions | LogLevel = {}): Logger {
  const o: LoggerOptions = typeof opts === 'string' ? { level: opts } : opts;
  const secrets = (o.secrets ?? []).filter((s) => s.length >= 4);
  const scrub = (value: string): string => secrets.reduce((text, secret) => text.split(secret).join(CENSOR), value.replace(PAN_LIKE, CENSOR));
  const destination = o.write ? { write: o.write } : pino.destination({ fd: 2, sync: true });
  const base = pino(
    {
      level: o.level ?? 'info',
      base: { component },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: (obj) => scrubStrings(obj, scrub) as Record<string, unknown> },
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      hooks: {
        logMethod(args, method) {
          // Our Logger passes (msg, fields); pino takes (fields, msg). The message is scrubbed too.
          const [msg, fields] = args as unknown as [string, Record<string, unknown> | undefined];
          return method.call(this, fields ?? {}, scrub(String(msg)));
        },
      },
    },
    destination,
  );
  const call = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => (base[level] as (...a: unknown[]) => void)(msg, fields);
  return { debug: call('debug'), info: call('info'), warn: call('warn'), error: call('error') };
}

function scrubStrings(value: unknown, scrub: (s: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubStrings(v, scrub, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubStrings(v, scrub, depth + 1)]));
}

export const silentLogger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The logger of an entry point: its level from LOG_LEVEL, and this process's secrets scrubbed wherever they appear. */
export function processLogger(
  component: string,
  config: { logLevel: LogLevel; provider: { apiSecret: string; webhookSecret: string }; codec: { key: string } },
): Logger {
  return createLogger(component, { level: config.logLevel, secrets: [config.provider.apiSecret, config.provider.webhookSecret, config.codec.key] });
}
