/** A workflow history as text twice over: as stored (encrypted payloads), and with every payload decoded by our codec, as an operator with the codec server would see it. */
import type { temporal } from '@temporalio/proto';
import { createPayloadCodec } from '../../src/codec/payload-codec';
import type { Config } from '../../src/config';

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
