/**
 * Turning command-line flags into validated inputs. Everything here runs before anything is
 * started: a problem throws UsageError, whose message is one line naming the flag and the rule.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { MAX_UPLOAD_BYTES } from '../provider/uploads';
import type { FieldErrors } from '../shared/failures';
import type { DocumentRef } from '../shared/types';

/** Bad input: the CLI exits 2 and nothing has been started. */
export class UsageError extends Error {
  readonly type = 'UsageError';
}

export type Flags = Record<string, string | boolean | string[] | undefined>;

/** The value of a string flag, or UsageError when it is required and absent. */
export function flag(flags: Flags, name: string, required: true): string;
export function flag(flags: Flags, name: string, required?: false): string | undefined;
export function flag(flags: Flags, name: string, required = false): string | undefined {
  const value = flags[name];
  if (typeof value === 'string' && value.length > 0) return value;
  if (value === '') throw new UsageError(`--${name} must not be empty`);
  if (required) throw new UsageError(`--${name} is required`);
  return undefined;
}

export function listFlag(flags: Flags, name: string): string[] {
  const value = flags[name];
  return Array.isArray(value) ? value : [];
}

/** Whole cents only: "10.00" or "1e3" would be read differently by different people. */
export function cents(flags: Flags, name: string): number {
  const raw = flag(flags, name, true);
  if (!/^\d{1,12}$/.test(raw)) throw new UsageError(`--${name} must be a whole number of cents, e.g. 1000 for 10.00 (got "${raw}")`);
  return Number(raw);
}

/**
 * Field errors (from the shared rules) as one line in terms of flags. `flagOf` maps a field, or
 * a dotted prefix such as `documents.idBack`, to its flag; the longest match wins.
 */
export function assertNoErrors(errors: FieldErrors, flagOf: Record<string, string>, fallback = 'input'): void {
  const entries = Object.entries(errors);
  if (entries.length === 0) return;
  const described = entries.map(([path, rule]) => {
    const match = Object.keys(flagOf)
      .filter((key) => path === key || path.startsWith(`${key}.`))
      .sort((a, b) => b.length - a.length)[0];
    if (match === undefined) return `${fallback} field ${path} ${rule}`;
    return path === match ? `${flagOf[match]} ${rule}` : `${flagOf[match]} (${path}) ${rule}`;
  });
  throw new UsageError(described.join('; '));
}

/** A JSON object from a file named by a flag. */
export function readJsonObject(path: string, flagName: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--${flagName} ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`--${flagName} ${path} must hold valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`--${flagName} ${path} must hold a JSON object`);
  return value as Record<string, unknown>;
}

const CONTENT_TYPES: Record<string, DocumentRef['contentType']> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.pdf': 'application/pdf',
};

/** An operator's file for the workers' documents store: its reference (by a name derived from its content) and its bytes. */
export interface LocalDocument {
  ref: DocumentRef;
  bytes: Buffer;
}

/**
 * The operator's file at `path`: it must exist, be small enough and of a type the provider takes.
 * The workers never read it there: `kyc` copies it into their documents store (KYC_DOCUMENTS_DIR)
 * under a name made of its content's digest, and the flow names that.
 */
export function localDocument(path: string, flagName: string): LocalDocument {
  const contentType = CONTENT_TYPES[extname(path).toLowerCase()];
  if (!contentType) throw new UsageError(`--${flagName} ${path} must be a .png, .jpg, .jpeg or .pdf file`);
  let bytes: Buffer;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new UsageError(`--${flagName} ${path} must be a file`);
    if (stat.size === 0 || stat.size > MAX_UPLOAD_BYTES) throw new UsageError(`--${flagName} ${path} must be between 1 byte and ${MAX_UPLOAD_BYTES / (1024 * 1024)} MB`);
    bytes = readFileSync(path);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--${flagName} ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 40);
  return { ref: { name: `cli/${digest}${extname(path).toLowerCase()}`, contentType, fileName: basename(path).slice(-128) }, bytes };
}
