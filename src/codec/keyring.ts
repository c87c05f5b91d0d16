/**
 * Retired keys as operators write them in one variable (PAYLOAD_CODEC_PREVIOUS_KEYS,
 * CARD_SEAL_PREVIOUS_KEYS): `id:base64,id:base64`. One parser for the process configuration
 * (src/config.ts) and the client's optionsFromEnv, so both read a rotation the same way.
 */

import { KEY_ID_PATTERN } from '../shared/key-id';

export { KEY_ID_PATTERN };

/** True for 32 bytes in base64 (AES-256). */
export function isKey(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32;
}

/**
 * `id:base64,…` → { id: base64 }; undefined when unset or empty. Throws an Error whose message
 * names the rule and the offending id (never the key).
 */
export function parseKeyList(text: string | undefined): Record<string, string> | undefined {
  if (!text || text.trim() === '') return undefined;
  const keys: Record<string, string> = {};
  for (const [i, entry] of text.split(',').entries()) {
    const at = entry.indexOf(':');
    const id = entry.slice(0, Math.max(at, 0)).trim();
    const key = entry.slice(at + 1).trim();
    if (at <= 0 || !KEY_ID_PATTERN.test(id)) throw new Error(`must be id:base64 pairs separated by commas; entry ${i + 1} has no id of 1-32 characters of [A-Za-z0-9_-] before ':'`);
    if (!isKey(key)) throw new Error(`must be id:base64 pairs separated by commas; the key of "${id}" is not 32 bytes encoded in base64`);
    if (id in keys) throw new Error(`names the key id "${id}" twice`);
    keys[id] = key;
  }
  return keys;
}
