/**
 * Where a provider's failure answer puts what went wrong: the envelope, and its field errors
 * wherever they are (errors.ts maps the rest of the answer to a ProviderError).
 */
import { providerFieldErrors } from './provider-text';

/** A parsed failure envelope; every field optional because a proxy may answer anything. */
export interface FailureEnvelope {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
  /** Some providers put the field errors here, as `data.errors` or as `data` itself. */
  data?: unknown;
}

/**
 * The field errors wherever the provider put them: `errors`, `data.errors`, or `data` itself when
 * it is a map of field → text (the spec names an "errors map" but shows no envelope field for it).
 * Names and rules are scrubbed and capped, and their count capped too (provider-text.ts): they go on
 * into failures, history, logs and Nexus answers.
 */
export function errorsOf(envelope: FailureEnvelope | undefined): Record<string, string> | undefined {
  if (envelope === undefined) return undefined;
  const data = envelope.data;
  const inData = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as { errors?: unknown }).errors : undefined;
  const dataItself = isTextMap(data) || Array.isArray(data) ? data : undefined;
  for (const place of [envelope.errors, inData, dataItself]) {
    const found = fieldErrors(place);
    if (found !== undefined) return providerFieldErrors(found);
  }
  return undefined;
}

function isTextMap(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0 && Object.values(v).every((x) => typeof x === 'string');
}

/**
 * Field names and their rules, read from a map (`{ field: rule }`) or an array of `{ field,
 * message }` (also `name`/`path` and `error`/`reason`/`rule`). A rule that is not a string is
 * replaced by a fixed text: a provider that echoed our input there (a card number, an id
 * number) must not carry it into logs, failure details or workflow history.
 */
function fieldErrors(raw: unknown): Record<string, string> | undefined {
  if (Array.isArray(raw)) return fieldErrorList(raw);
  if (typeof raw !== 'object' || raw === null) return undefined;
  const out: Record<string, string> = {};
  for (const [field, rule] of Object.entries(raw)) out[field] = typeof rule === 'string' ? rule : 'is invalid';
  return out;
}

function fieldErrorList(items: unknown[]): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const item of items) {
    if (typeof item !== 'object' || item === null) continue;
    const e = item as Record<string, unknown>;
    const field = [e.field, e.name, e.path, e.param].find((v) => typeof v === 'string' && v !== '') as string | undefined;
    if (field === undefined) continue;
    const rule = [e.message, e.error, e.reason, e.rule].find((v) => typeof v === 'string');
    out[field] ??= typeof rule === 'string' ? rule : 'is invalid';
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
