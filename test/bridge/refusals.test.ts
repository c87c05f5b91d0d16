/**
 * The bridge's input checks, through fastify's inject (no port, no Temporal): whatever fails the
 * signature, the timestamp window, the API key, the nonce or the body's shape is refused before
 * anything is signalled. Temporal is a stub that records signal-with-start calls; the end-to-end
 * deliveries are in bridge.test.ts.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { buildBridge, MAX_WEBHOOK_BYTES, WEBHOOK_PATH } from '../../src/bridge/app';
import { HmacSha256Scheme, NonceCache } from '../../src/provider/signing';
import { signWebhook } from '../helpers/webhooks';

const NOW = 1_767_225_600_000;
const TOLERANCE_MS = 5 * 60 * 1000;
const provider = { apiKey: 'key_inject', webhookSecret: 'secret_inject' };

interface Signalled {
  workflowId: string;
  signalArgs: unknown[];
}

/** What an entity workflow answers the bridge's query about one event (undefined: no such workflow). */
type EntityAnswer = { applied: boolean; state: Record<string, unknown> } | undefined;

/** Temporal's side, as far as the bridge reaches it: a signal-with-start that records, or fails, or hangs; the entities' answers. */
function fakeTemporal(answer: 'take' | 'fail' | 'hang' = 'take') {
  const signalled: Signalled[] = [];
  const entities = new Map<string, EntityAnswer>();
  const client = {
    connection: { withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn() },
    workflow: {
      getHandle: (workflowId: string) => ({
        query: async () => {
          const known = entities.get(workflowId);
          if (known === undefined) throw new WorkflowNotFoundError('not found', workflowId, undefined);
          return known;
        },
        // A late delivery goes to the running entity workflow only.
        signal: async (_signal: unknown, ...signalArgs: unknown[]) => {
          if (!entities.has(workflowId)) throw new WorkflowNotFoundError('not found', workflowId, undefined);
          signalled.push({ workflowId, signalArgs });
        },
      }),
      signalWithStart: async (_type: string, opts: Signalled) => {
        signalled.push({ workflowId: opts.workflowId, signalArgs: opts.signalArgs });
        if (answer === 'fail') throw new Error('UNAVAILABLE');
        if (answer === 'hang') await new Promise(() => undefined);
        return {};
      },
    },
  };
  return { client: client as unknown as Client, signalled, entities };
}

describe('bridge refusals (app.inject, no Temporal)', () => {
  let app: FastifyInstance;
  let temporal: ReturnType<typeof fakeTemporal>;
  let nonces: NonceCache;

  const build = (answer?: 'take' | 'fail' | 'hang') => {
    temporal = fakeTemporal(answer);
    nonces = new NonceCache(TOLERANCE_MS, () => NOW);
    const verifier = new HmacSha256Scheme({ apiKey: provider.apiKey, secret: provider.webhookSecret, now: () => NOW, toleranceMs: TOLERANCE_MS });
    app = buildBridge({ temporal: temporal.client, taskQueue: 'q', verifier, nonces, signalDeadlineMs: 200, now: () => NOW });
  };
  beforeEach(() => build());
  afterEach(async () => app.close());

  const kycEvent = (id: string) => JSON.stringify({ eventId: `evt_${id}`, eventType: 'CARDHOLDER_KYC_STATUS', createdAt: NOW, data: { id, kycStatus: 'APPROVED' } });
  const post = async (body: string | Buffer, headers: Record<string, string>, url = WEBHOOK_PATH) => {
    const res = await app.inject({ method: 'POST', url, headers, payload: body });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };
  const signed = (body: string | Buffer, opts: Parameters<typeof signWebhook>[2] = {}) => signWebhook(body, provider, { now: () => NOW, ...opts });

  it('a well-signed event is signalled to its entity once (the control for every refusal below)', async () => {
    const body = kycEvent('kyc_ok');
    expect(await post(body, signed(body))).toMatchObject({ status: 200, body: { ok: true, eventId: 'evt_kyc_ok', workflowId: 'kyc-cardholder/kyc_ok' } });
    expect(temporal.signalled).toEqual([{ workflowId: 'kyc-cardholder/kyc_ok', signalArgs: [expect.objectContaining({ eventId: 'evt_kyc_ok' })] }]);
  });

  it('a replayed delivery (same bytes, same nonce) is answered 200 again and not signalled again', async () => {
    const body = kycEvent('kyc_replayed');
    const headers = signed(body);
    expect((await post(body, headers)).status).toBe(200);
    expect(await post(body, headers)).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(temporal.signalled).toHaveLength(1);
  });

  it('a nonce already used for other bytes cannot carry them: the signature covers the nonce and the body', async () => {
    const headers = signed(kycEvent('kyc_first'));
    expect(await post(kycEvent('kyc_other'), headers)).toMatchObject({ status: 401, body: { reason: 'BAD_SIGNATURE' } });
    expect(temporal.signalled).toEqual([]);
  });

  it.each([
    ['another secret', () => signWebhook(kycEvent('kyc_x'), { ...provider, webhookSecret: 'secret_wrong' }, { now: () => NOW })],
    ['another path', () => signed(kycEvent('kyc_x'), { path: '/webhooks/other' })],
    ['a tampered signature', () => ({ ...signed(kycEvent('kyc_x')), 'x-signature': 'AAAA' })],
  ])('a signature made with %s is refused 401 BAD_SIGNATURE', async (_what, headers) => {
    expect(await post(kycEvent('kyc_x'), headers())).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED', reason: 'BAD_SIGNATURE' } });
    expect(temporal.signalled).toEqual([]);
  });

  it('a body changed after signing is refused', async () => {
    const headers = signed(kycEvent('kyc_a'));
    expect((await post(kycEvent('kyc_b'), headers)).status).toBe(401);
    expect((await post(`${kycEvent('kyc_a')} `, headers)).status).toBe(401);
    expect(temporal.signalled).toEqual([]);
  });

  it('a timestamp outside the window that is not genuinely signed, or not a timestamp, is refused 401 STALE_TIMESTAMP; one just inside is accepted', async () => {
    const body = kycEvent('kyc_t');
    for (const skew of [-(TOLERANCE_MS + 1000), TOLERANCE_MS + 1000]) {
      const forged = { ...signed(body, { now: () => NOW + skew }), 'x-signature': 'AAAA' };
      expect(await post(body, forged)).toMatchObject({ status: 401, body: { reason: 'STALE_TIMESTAMP' } });
    }
    expect(await post(body, { ...signed(body), 'x-timestamp': 'yesterday' })).toMatchObject({ status: 401 });
    expect(temporal.signalled).toEqual([]);
    expect((await post(body, signed(body, { now: () => NOW - TOLERANCE_MS + 1000 }))).status).toBe(200);
  });

  describe('a genuinely signed delivery redelivered after the timestamp window (late)', () => {
    const late = (body: string) => signed(body, { now: () => NOW - 2 * 60 * 60 * 1000 });

    it('is refused when its entity has no workflow: a late delivery never starts one', async () => {
      const body = kycEvent('kyc_late_new');
      expect(await post(body, late(body))).toMatchObject({ status: 401, body: { reason: 'STALE_TIMESTAMP' } });
      expect(temporal.signalled).toEqual([]);
    });

    it('is refused without asking when it is older than the provider redelivers (a day): a captured replay', async () => {
      temporal.entities.set('kyc-cardholder/kyc_replayed_late', { applied: false, state: { kind: 'kyc', entityId: 'kyc_replayed_late', status: 'PENDING', eventCount: 0 } });
      const body = kycEvent('kyc_replayed_late');
      expect(await post(body, signed(body, { now: () => NOW - 25 * 60 * 60 * 1000 }))).toMatchObject({ status: 401, body: { reason: 'STALE_TIMESTAMP' } });
      expect(temporal.signalled).toEqual([]);
    });

    it('is let through when the entity did not apply its eventId and it is in order', async () => {
      temporal.entities.set('kyc-cardholder/kyc_late_pending', { applied: false, state: { kind: 'kyc', entityId: 'kyc_late_pending', status: 'PENDING', eventCount: 0 } });
      const body = kycEvent('kyc_late_pending');
      expect(await post(body, late(body))).toMatchObject({ status: 200, body: { late: true } });
      expect(temporal.signalled).toHaveLength(1);
    });

    it('is answered 200 and not applied again when the entity already applied its eventId', async () => {
      temporal.entities.set('kyc-cardholder/kyc_late_seen', { applied: true, state: { kind: 'kyc', entityId: 'kyc_late_seen', status: 'APPROVED', eventCount: 1 } });
      const body = kycEvent('kyc_late_seen');
      expect(await post(body, late(body))).toMatchObject({ status: 200, body: { duplicate: true } });
      expect(temporal.signalled).toEqual([]);
    });

    it('is refused STALE_TIMESTAMP when it would take the entity back to an older status', async () => {
      temporal.entities.set('card/crd_late', { applied: false, state: { kind: 'card', entityId: 'crd_late', status: 'DELETED', eventCount: 3, lastEventAt: NOW } });
      const body = JSON.stringify({ eventType: 'CARD_CREATED', data: { cardId: 'crd_late', status: 'ENABLE' } });
      expect(await post(body, late(body))).toMatchObject({ status: 401, body: { reason: 'STALE_TIMESTAMP' } });
      expect(temporal.signalled).toEqual([]);
    });
  });

  it('CARD_CREATED without a status is delivered as ENABLE (the spec: the card is then ENABLE), its derived id from the data as sent', async () => {
    const body = JSON.stringify({ eventType: 'CARD_CREATED', data: { cardId: 'crd_nostatus' } });
    expect((await post(body, signed(body))).status).toBe(200);
    const [event] = temporal.signalled[0].signalArgs as Array<{ eventId: string; data: Record<string, unknown> }>;
    expect(event.data).toEqual({ cardId: 'crd_nostatus', status: 'ENABLE' });
    const { deriveEventId } = await import('../../src/bridge/events');
    expect(event.eventId).toBe(deriveEventId('CARD_CREATED', { cardId: 'crd_nostatus' }));
  });

  it.each(['x-timestamp', 'x-nonce', 'x-signature'])('without %s: 401 MISSING_HEADER', async (header) => {
    const body = kycEvent('kyc_h');
    const { [header]: _dropped, ...headers } = signed(body);
    expect(await post(body, headers)).toMatchObject({ status: 401, body: { reason: 'MISSING_HEADER' } });
    expect(temporal.signalled).toEqual([]);
  });

  it('the X-API-Key of another project is refused; none at all is accepted (the spec does not promise it)', async () => {
    const body = kycEvent('kyc_k');
    expect(await post(body, { ...signed(body), 'x-api-key': 'key_someone_else' })).toMatchObject({ status: 401, body: { reason: 'WRONG_API_KEY' } });
    expect(temporal.signalled).toEqual([]);
    expect((await post(body, signed(body, { withoutApiKey: true }))).status).toBe(200);
    expect(temporal.signalled).toHaveLength(1);
  });

  it.each([
    ['that is not JSON', '{"eventId": ', 'body'],
    ['that is a JSON array', '[]', 'body'],
    ['without eventType', JSON.stringify({ data: { id: 'kyc_1' } }), 'eventType'],
    ['without data', JSON.stringify({ eventType: 'CARDHOLDER_KYC_STATUS' }), 'data'],
    ['with data that is not an object', JSON.stringify({ eventType: 'CARDHOLDER_KYC_STATUS', data: 'APPROVED' }), 'data'],
  ])('a signed body %s is refused 400, naming the field', async (_what, body, field) => {
    const answer = await post(body, signed(body));
    expect(answer).toMatchObject({ status: 400, body: { error: 'MALFORMED_EVENT', errors: { [field]: expect.any(String) } } });
    expect(temporal.signalled).toEqual([]);
  });

  it('a body over the size limit is refused 413 before it is read, signed or not', async () => {
    const body = JSON.stringify({ eventId: 'evt_big', eventType: 'X', createdAt: NOW, data: { pad: 'x'.repeat(MAX_WEBHOOK_BYTES) } });
    expect(await post(body, signed(body))).toMatchObject({ status: 413, body: { error: 'PAYLOAD_TOO_LARGE' } });
    expect(temporal.signalled).toEqual([]);
  });

  it('no other route: 404, and the health check answers', async () => {
    const body = kycEvent('kyc_p');
    expect((await post(body, signed(body, { path: '/webhooks/other' }), '/webhooks/other')).status).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    expect(temporal.signalled).toEqual([]);
  });

  it('when Temporal refuses or does not answer within the deadline: 503, and the nonce stays free for the redelivery', async () => {
    for (const answer of ['fail', 'hang'] as const) {
      await app.close();
      build(answer);
      const body = kycEvent(`kyc_${answer}`);
      const headers = signed(body);
      const started = Date.now();
      expect(await post(body, headers)).toMatchObject({ status: 503, body: { error: 'TEMPORARILY_UNAVAILABLE' } });
      expect(Date.now() - started).toBeLessThan(2000);
      expect(nonces.has(headers['x-nonce'])).toBe(false);
    }
  });
});
