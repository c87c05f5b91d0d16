/**
 * Reading a verified webhook body. The spec shows no payload shape (CONTRACTS §4): only
 * `eventType` and a `data` object are required. A missing `eventId` is derived from a hash of
 * the type and the data (so a redelivery of the same content de-duplicates in the entity
 * workflow); a missing `createdAt` becomes the time the bridge received the event. Unknown
 * fields are kept; no event type's data is checked beyond what routing needs (routing.ts).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { fieldErrorsFromZod } from '../shared/zod-field-errors';
import type { ProviderEvent } from '../shared/types';
import { canonicalJson } from '../shared/canonical-json';
import { providerText } from '../provider/provider-text';

const envelopeSchema = z.looseObject({
  eventType: z.string('is required').min(1, 'is required').max(64, 'must be at most 64 characters'),
  data: z.record(z.string(), z.unknown(), 'must be a JSON object'),
  eventId: z.string().min(1).max(128).optional().catch(undefined),
  createdAt: z.number().int().optional().catch(undefined),
});

/** How far ahead of ours the provider's clock may run (the signature's timestamp window). */
const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

export type ParsedEvent = { event: ProviderEvent; derivedId: boolean } | { errors: Record<string, string> };

export function parseEvent(raw: Buffer, receivedAt: number): ParsedEvent {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    return { errors: { body: 'must be a JSON object' } };
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) return { errors: fieldErrorsFromZod(envelope.error) };
  const { eventType, data, eventId, createdAt } = envelope.data;
  return {
    // The id is derived from the data as the provider sent it, before the spec's defaults are filled in.
    // A createdAt from the far future would make every later event look older (statuses never go back): none is taken as
    // later than its receipt plus a clock skew the signature's window allows anyway.
    event: { eventId: eventId ?? deriveEventId(eventType, data), eventType, createdAt: Math.min(createdAt ?? receivedAt, receivedAt + MAX_CLOCK_SKEW_MS), data: withSpecDefaults(eventType, data) },
    derivedId: eventId === undefined,
  };
}

/** The provider's free texts in an event: a rejection's reason may repeat identity data, so each is capped and scrubbed before it enters history. */
const FREE_TEXTS = ['reason', 'failureReason', 'message', 'remark'] as const;

/** The spec: when CARD_CREATED arrives the card "is then ENABLE", so an event without a status says ENABLE. Free texts scrubbed (provider-text.ts). */
function withSpecDefaults(eventType: string, data: Record<string, unknown>): Record<string, unknown> {
  const scrubbed = { ...data };
  for (const field of FREE_TEXTS) if (typeof scrubbed[field] === 'string') scrubbed[field] = providerText(scrubbed[field] as string);
  return eventType === 'CARD_CREATED' && typeof scrubbed.status !== 'string' ? { ...scrubbed, status: 'ENABLE' } : scrubbed;
}

/** evt_ + SHA-256 of the type and the canonical JSON of the data: the same content always gets the same id. */
export function deriveEventId(eventType: string, data: Record<string, unknown>): string {
  return 'evt_' + createHash('sha256').update(eventType).update('\u0000').update(canonicalJson(data)).digest('hex').slice(0, 40);
}

