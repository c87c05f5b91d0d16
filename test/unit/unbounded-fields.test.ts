/**
 * Unbounded provider fields (issue 45, case 10), the pure parts: a webhook's createdAt is never later
 * than its receipt (a far-future one would make every later event look older), a status is kept as
 * far as a status word goes (a 3 KB one must not reach a search attribute), and an answer's status
 * likewise.
 */
import { parseEvent } from '../../src/bridge/events';
import { MAX_STATUS_LENGTH, statusOf } from '../../src/shared/event-status';
import { payoutAnswerSchema } from '../../src/provider/answers';

const NOW = 1_767_225_600_000;

test('a far-future createdAt is taken as the time of receipt (plus the clock skew the signature allows); an earlier one is kept', () => {
  const parse = (createdAt: number) => parseEvent(Buffer.from(JSON.stringify({ eventId: 'evt_1', eventType: 'CARD_CREATED', createdAt, data: { cardId: 'crd_1' } })), NOW);
  expect(parse(NOW + 10 * 365 * 86_400_000)).toMatchObject({ event: { createdAt: NOW + 5 * 60_000 } });
  // A provider clock a minute ahead of ours is no replay: kept as given.
  expect(parse(NOW + 60_000)).toMatchObject({ event: { createdAt: NOW + 60_000 } });
  expect(parse(NOW - 60_000)).toMatchObject({ event: { createdAt: NOW - 60_000 } });
});

test('a 3 KB status is kept as far as a status word goes, in webhooks and in answers', () => {
  const long = `COMPLETED${'X'.repeat(3000)}`;
  expect(statusOf({ eventId: 'e', eventType: 'PAYOUT_COMPLETED', createdAt: NOW, data: { status: long } })).toHaveLength(MAX_STATUS_LENGTH);
  const parsed = payoutAnswerSchema.safeParse({ merOrderNo: 'po_1', status: long });
  expect(parsed.success && parsed.data.status).toHaveLength(MAX_STATUS_LENGTH);
});

test("a webhook's free texts (a rejection's reason) are capped and scrubbed before they reach a workflow; its id is the provider's content's", () => {
  const reason = `ID 1234567890123456 of ada@example.com does not match ${'x'.repeat(1000)}`;
  const raw = { eventType: 'CARDHOLDER_KYC_STATUS', data: { id: 'kyc_1', kycStatus: 'REJECTED', reason } };
  const parsed = parseEvent(Buffer.from(JSON.stringify(raw)), NOW);
  if (!('event' in parsed)) throw new Error('expected an event');
  const text = parsed.event.data.reason as string;
  expect(text.length).toBeLessThanOrEqual(200);
  expect(text).not.toMatch(/1234567890123456|ada@example\.com/);
  expect(parsed.event.data).toMatchObject({ id: 'kyc_1', kycStatus: 'REJECTED' });
  // De-duplication keys on what the provider sent: the same content, the same derived id.
  const again = parseEvent(Buffer.from(JSON.stringify(raw)), NOW + 1);
  expect('event' in again && again.event.eventId).toBe(parsed.event.eventId);
});
