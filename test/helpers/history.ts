/** A workflow history as text twice over: as stored (encrypted payloads), and with every payload decoded by our codec, as an operator with the codec server would see it. */
import type { temporal } from '@temporalio/proto';
import { createPayloadCodec } from '../../src/codec/payload-codec';
import type { Config } from '../../src/config';
import type { SealedPin, SealedReveal } from '../../src/shared/types';

type Payload = temporal.api.common.v1.IPayload;

export async function historyTexts(history: unknown, codecConfig: Config['codec']): Promise<{ stored: string; decoded: string }> {
  const codec = createPayloadCodec(codecConfig);
  const payloads: Payload[] = [];
  collectPayloads(history, payloads);
  const decoded = await codec.decode(payloads);
  const text = (p: Payload) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8');
  return {
    stored: JSON.stringify(history) + payloads.map(text).join('\n'),
    decoded: decoded.map(text).join('\n'),
  };
}

/** Every payload of a history (or any part of one), as stored. */
export function payloadsOf(history: unknown): Payload[] {
  const out: Payload[] = [];
  collectPayloads(history, out);
  return out;
}

/** POST /decode as the Temporal UI does it (JSON, base64 fields), through a running codec endpoint. */
export async function decodeThrough(server: { url: string }, payloads: Payload[]): Promise<Payload[]> {
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  const body = { payloads: payloads.map((p) => ({ metadata: Object.fromEntries(Object.entries(p.metadata!).map(([k, v]) => [k, b64(v)])), data: b64(p.data!) })) };
  const res = await fetch(`${server.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-namespace': 'default' }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`the codec endpoint answered ${res.status} to /decode`);
  const json = (await res.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
  return json.payloads.map((p) => ({ metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])), data: Buffer.from(p.data, 'base64') }));
}

function collectPayloads(node: unknown, out: Payload[]): void {
  if (!node || typeof node !== 'object') return;
  if (node instanceof Uint8Array) return;
  const obj = node as Record<string, unknown>;
  if (obj.metadata && typeof obj.metadata === 'object' && obj.data instanceof Uint8Array) {
    out.push(obj as Payload);
    return;
  }
  for (const value of Object.values(obj)) collectPayloads(value, out);
}

/** Every sealed box in decoded payloads' JSON: a PIN's { keyId, enc, sealed } or a reveal's { enc, sealed }. */
export function sealedBoxes(payloads: Payload[]): Array<SealedPin | SealedReveal> {
  const boxes: Array<SealedPin | SealedReveal> = [];
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const obj = node as Record<string, unknown>;
    if (typeof obj.enc === 'string' && typeof obj.sealed === 'string') boxes.push(obj as unknown as SealedPin | SealedReveal);
    else for (const value of Object.values(obj)) walk(value);
  };
  for (const p of payloads) {
    try {
      walk(JSON.parse(Buffer.from(p.data ?? new Uint8Array()).toString('utf8')));
    } catch {
      // not JSON (binary/null payloads): no box inside
    }
  }
  return boxes;
}

/**
 * `digits` as a value of its own (a JSON string, after `=` or `:`), never a run inside base64, an
 * ID or a timestamp: a 4-digit PIN would otherwise be found by chance in the ciphertexts themselves.
 */
export function standaloneDigits(digits: string): RegExp {
  return new RegExp(`(^|[\\s"':=,{\\[])${digits}($|[\\s"',}\\]])`);
}
