/**
 * The building blocks of the provider's request rules: plain checks, no schema library.
 *
 * Why not zod here: workflow code validates its input with these rules, and the Temporal SDK
 * evaluates a workflow bundle's modules again in every workflow context. zod alone holds about
 * 2.5 MB per context, which made a parked flow cost 8.7 times a bare workflow
 * (docs/performance.md, P3 and P4). zod still reads the provider's answers, in activities.
 *
 * Messages are short rules ("must be an integer between 100 and 4000000"), keyed by the
 * field's dotted path; a missing required field reads "is required". The sandbox returns them
 * verbatim in its 400 `errors` map, and the client refuses the same bodies before sending.
 */
import type { FieldErrors } from '../shared/failures';

export type { FieldErrors };

/** Checks one present value; answers the rule it breaks, or undefined. */
export type Rule = (value: unknown) => string | undefined;

/** Checks a value at `path` (absent values included) and names every bad field under it. */
export type Check = (value: unknown, path: string) => FieldErrors;

export interface Field {
  check: Check;
  optional: boolean;
  /** A nested object's own rules, so that its unknown fields are dropped too. */
  body?: Body<unknown>;
}

export type Fields = Record<string, Field>;

const REQUIRED = 'is required';

function at(path: string, rule: string): FieldErrors {
  return { [path]: rule };
}

/** A value made of parts (an object, an array) whose rules name the parts' own paths. */
export interface Composite {
  errorsAt(value: unknown, path: string): FieldErrors;
}

/** A field that must be present and meet `rule`. */
export function required(rule: Rule | Composite): Field {
  if (typeof rule === 'function') return { check: leaf(rule), optional: false };
  const check: Check = (v, p) => (v === undefined ? at(p, REQUIRED) : rule.errorsAt(v, p));
  return rule instanceof Body ? { check, optional: false, body: rule } : { check, optional: false };
}

/** A field that may be absent; when present it meets `rule`. */
export function optional(rule: Rule | Composite): Field {
  const field = required(rule);
  return { ...field, check: (v, p) => (v === undefined ? {} : field.check(v, p)), optional: true };
}

/** An array: `text` is the rule for the array itself (not an array, too short or too long), `item` each element's. */
export function list(text: string, item: Rule, bounds: { min?: number; max?: number } = {}): Composite {
  const { min = 0, max = Number.MAX_SAFE_INTEGER } = bounds;
  return {
    errorsAt(value, path) {
      if (!Array.isArray(value)) return at(path, text);
      const errors: FieldErrors = value.length < min || value.length > max ? at(path, text) : {};
      value.forEach((v, i) => Object.assign(errors, leaf(item)(v, `${path}.${i}`)));
      return errors;
    },
  };
}

function leaf(rule: Rule): Check {
  return (value, path) => {
    const broken = value === undefined ? REQUIRED : rule(value);
    return broken === undefined ? {} : at(path, broken);
  };
}

/** A JSON object's rules: its fields, and rules across fields that run once it is an object. */
export class Body<T> implements Composite {
  constructor(
    readonly fields: Fields,
    readonly across?: (body: Record<string, unknown>) => FieldErrors,
  ) {}

  /** Every broken rule of `value`; {} when it meets them all. A field's own rule wins over a rule across fields. */
  errors(value: unknown): FieldErrors {
    return this.errorsAt(value, '');
  }

  errorsAt(value: unknown, path: string): FieldErrors {
    if (!isRecord(value)) return at(path || 'body', path ? 'must be an object' : 'must be a JSON object');
    const errors: FieldErrors = {};
    for (const [name, field] of Object.entries(this.fields)) Object.assign(errors, field.check(value[name], path ? `${path}.${name}` : name));
    for (const [name, rule] of Object.entries(this.across?.(value) ?? {})) errors[path ? `${path}.${name}` : name] ??= rule;
    return errors;
  }

  /** The body as sent and stored: only the fields the provider knows, nested ones included. */
  known(value: unknown): T {
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(this.fields)) {
      if (source[name] === undefined) continue;
      out[name] = field.body && isRecord(source[name]) ? field.body.known(source[name]) : source[name];
    }
    return out as T;
  }

  /** The same rules for some fields only (the CLI checks one flag at a time). */
  only<K extends keyof T & string>(...names: K[]): Body<Pick<T, K>> {
    return new Body(Object.fromEntries(names.map((n) => [n, this.fields[n]])));
  }
}

/**
 * Where the spec shows no request shape, a caller may send fields we do not model through an
 * explicit `extra` object: sent as it is, beside the fields we model (which it may not repeat,
 * so a modelled field's rule cannot be bypassed). Only the names `allowed` lists (each endpoint's,
 * docs/provider-fidelity.md): whatever else a caller put there would reach the provider unread by
 * us, signed with our key. Their values are the provider's 400 to judge.
 */
export const EXTRA_FIELD = 'extra';
/** The start of the rule an `extra` name outside the endpoint's list breaks. */
const EXTRA_NOT_ALLOWED = 'is not a field extra may carry';
export function withExtra(fields: Fields, allowed: readonly string[]): Fields {
  const modelled = Object.keys(fields);
  const notAllowed = `${EXTRA_NOT_ALLOWED} (${allowed.length > 0 ? `only ${allowed.join(', ')}` : 'none here'})`;
  const extra: Composite = {
    errorsAt(value, path) {
      if (!isRecord(value)) return at(path, 'must be an object of fields sent to the provider as they are');
      const errors: FieldErrors = {};
      for (const name of Object.keys(value)) {
        if (modelled.includes(name)) errors[`${path}.${name}`] = `is a field we model: set ${name} itself`;
        else if (!allowed.includes(name)) errors[`${path}.${name}`] = notAllowed;
      }
      return errors;
    },
  };
  return { ...fields, [EXTRA_FIELD]: optional(extra) };
}

/**
 * A URL a caller gives for the provider to send someone to: `https://`, or `http://` to a loopback
 * address (a developer's sandbox; the provider client takes it only when its provider is one too),
 * and no `user:password@`, which can dress one host up as another.
 */
export const CALLER_URL_RULE = 'must be an https:// URL without user or password (http:// only to a loopback address, in development)';
export function callerUrl(): Rule {
  const string = anyString();
  return (v) => string(v) ?? (callerUrlScheme(v as string) !== undefined ? undefined : CALLER_URL_RULE);
}

/**
 * 'https', 'loopback-http', or undefined when `url` breaks CALLER_URL_RULE. Plain string checks
 * (workflow code runs them): a host of letters, digits, dots and dashes or an IPv6 literal, an
 * optional port, then a path, query or fragment; no `@` or backslash before the path.
 */
export function callerUrlScheme(url: string): 'https' | 'loopback-http' | undefined {
  const m = /^(https?):\/\/([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?(?:[/?#]\S*)?$/i.exec(url);
  if (!m) return undefined;
  if (m[1].toLowerCase() === 'https') return 'https';
  return isLoopbackHost(m[2]) ? 'loopback-http' : undefined;
}

/** localhost, 127.0.0.0/8 or [::1]. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The body as sent: the modelled fields with the caller's `extra` fields beside them. */
export function flattenExtra(body: unknown): unknown {
  if (!isRecord(body) || !isRecord(body[EXTRA_FIELD])) return body;
  const { [EXTRA_FIELD]: extra, ...known } = body;
  return { ...(extra as Record<string, unknown>), ...known };
}

/** The names of the caller's `extra` fields (logged by name only, never by value). */
export function extraFieldNames(body: unknown): string[] {
  return isRecord(body) && isRecord(body[EXTRA_FIELD]) ? Object.keys(body[EXTRA_FIELD]) : [];
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------

export function anyString(): Rule {
  return (v) => (typeof v === 'string' ? undefined : 'must be a string');
}

/** A string of `min` to `max` characters (UTF-16 units, as the provider's JSON counts them). */
export function text(max: number, min = 1): Rule {
  const rule = min > 0 ? `must be a string of ${min} to ${max} characters` : `must be a string of at most ${max} characters`;
  return (v) => (typeof v === 'string' && v.length >= min && v.length <= max ? undefined : rule);
}

export function pattern(re: RegExp, rule: string, maxLength?: { max: number; rule: string }): Rule {
  return (v) => {
    if (typeof v !== 'string' || !re.test(v)) return rule;
    return maxLength && v.length > maxLength.max ? maxLength.rule : undefined;
  };
}

export function oneOf(values: readonly string[]): Rule {
  const rule = `must be one of ${values.join(', ')}`;
  return (v) => (typeof v === 'string' && values.includes(v) ? undefined : rule);
}

/** An integer (cents, or minor units) within [min, max]; one rule text for type, integrality and bounds. */
export function integer(rule: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): Rule {
  return (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max ? undefined : rule);
}

export function cents(min: number, max: number): Rule {
  return integer(`must be an integer between ${min} and ${max}`, min, max);
}

/** yyyy-MM-dd that is a real calendar date; `when` compares it with today (UTC). */
export function isoDate(when: 'past' | 'future', now: () => number = Date.now): Rule {
  const rule = when === 'past' ? 'must be a date yyyy-MM-dd in the past' : 'must be a date yyyy-MM-dd not yet passed';
  return (v) => {
    if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return rule;
    const t = Date.parse(`${v}T00:00:00Z`);
    if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== v) return rule;
    const today = Date.parse(new Date(now()).toISOString().slice(0, 10) + 'T00:00:00Z');
    return (when === 'past' ? t < today : t >= today) ? undefined : rule;
  };
}

/** One value checked outside a body (a key, a PIN), named `field` in the errors. */
export function valueErrors(field: string, rule: Rule, value: unknown): FieldErrors {
  return leaf(rule)(value, field);
}
