/**
 * Temporal down: the bridge must answer 503 (never 2xx for an event Temporal did not take), and
 * the provider's redelivery must complete the flow once Temporal is back. This test runs its own
 * dev server with a database file, so it can stop and restart it without touching the others.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { entityWorkflowId } from '../../src/shared/ids';
import { entityStateQuery } from '../../src/shared/messages';
import { ensureTemporalCli } from '../../tools/temporal-cli';
import { freePort } from '../../src/ports';
import { startDevServer, type DevServer } from '../../tools/dev-server';
import { deliveries, waitUntil, type Delivery } from '../helpers/wait';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { signWebhook } from '../helpers/webhooks';

describe('bridge during a Temporal outage', () => {
  let server: DevServer | undefined;
  let stack: Stack | undefined;
  afterAll(async () => {
    await stack?.close();
    await server?.stop();
  });

  test('answers 503 while Temporal is down, and redelivery completes the flow when it is back', async () => {
    const cliPath = await ensureTemporalCli(loadConfig().temporal.cliPath);
    const dbFile = join(mkdtempSync(join(tmpdir(), 'outage-')), 'temporal.db');
    const port = await freePort();
    const start = () => startDevServer({ cliPath, port, dbFile, headless: true });
    server = await start();
    stack = await startStack({ cardProvisioningMs: 6000, webhook: { retryBaseMs: 500 } }, { TEMPORAL_ADDRESS: server.address });

    // Only the workflow is started now: a client call left waiting across the outage would itself give up.
    const workflowId = uniqueId('issue-card-outage');
    await stack.client.workflow.start('issueCard', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ cardBinId: 'bin_visa_basic', initialAmount: 900, firstName: 'Out', lastName: 'Age', timings: { ...FAST_TIMINGS, webhookWaitMs: 120_000, deadlineMs: 300_000 } }],
    });
    // Wait until the card exists at the provider (the flow is now waiting for CARD_CREATED), then stop Temporal.
    await waitUntil(async () => (await stack!.control('GET', '/ledger')).cards.length === 1);
    await server.stop();
    const answered503 = (d: Delivery) => d.eventType === 'CARD_CREATED' && d.attempts.some((a) => a.statusCode === 503);
    await waitUntil(async () => (await deliveries(stack!.control)).some(answered503), 30_000, 'a 503 answer to CARD_CREATED');
    server = await start();
    const card = await stack.client.workflow.getHandle(workflowId).result();
    expect(card.status).toBe('ENABLE');
    const createdLog = (await deliveries(stack.control)).find((d) => d.eventType === 'CARD_CREATED')!;
    expect(createdLog.status).toBe('DELIVERED');
    expect(createdLog.attempts.map((a) => a.statusCode)).toContain(503);
    // Never a 2xx for an event Temporal did not take: the 2xx is the last answer.
    expect(createdLog.attempts.filter((a) => a.statusCode === 200)).toHaveLength(1);
  }, 240_000);

  test('Temporal down 30 s under a webhook every 3 s: each 503 within the deadline; after it is back, the first webhook and a byte-for-byte resend of a 503 are accepted at once', async () => {
    await stack?.close();
    await server?.stop();
    const cliPath = await ensureTemporalCli(loadConfig().temporal.cliPath);
    const dbFile = join(mkdtempSync(join(tmpdir(), 'outage-load-')), 'temporal.db');
    const port = await freePort();
    const start = () => startDevServer({ cliPath, port, dbFile, headless: true });
    server = await start();
    stack = await startStack({}, { TEMPORAL_ADDRESS: server.address });
    const url = `${stack.bridge.url}/webhooks/provider`;
    const provider = stack.config.provider;
    const signed = (n: number) => {
      const body = JSON.stringify({ eventId: `evt_outage_${n}`, eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id: `kyc_outage_${n}`, kycStatus: 'APPROVED' } });
      return { body, headers: signWebhook(body, provider) };
    };
    const post = async (d: { body: string; headers: Record<string, string> }) => {
      const t0 = Date.now();
      const res = await fetch(url, { method: 'POST', headers: d.headers, body: d.body });
      return { status: res.status, ms: Date.now() - t0 };
    };
    expect((await post(signed(0))).status).toBe(200);

    await server.stop();
    // The provider does not wait for one answer before sending the next event.
    const inFlight: Array<Promise<{ status: number; ms: number }>> = [];
    const first503 = signed(1);
    for (let n = 1; n <= 10; n++) {
      inFlight.push(post(n === 1 ? first503 : signed(n)));
      await new Promise((r) => setTimeout(r, 3000));
    }
    const answers = await Promise.all(inFlight);
    for (const a of answers) expect(a.status).toBe(503);
    // The bridge's deadline is 5 s (the provider gives up after 10 s); a little slack for the event loop.
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThanOrEqual(5500);

    server = await start();
    const back = Date.now();
    const firstAfter = await post(signed(999));
    expect(firstAfter.status).toBe(200);
    expect(Date.now() - back).toBeLessThanOrEqual(2000);
    // The provider re-sends the delivery that got 503, byte for byte: accepted, since a 503 consumed no nonce.
    expect((await post(first503)).status).toBe(200);
    const state = await stack.client.workflow.getHandle(entityWorkflowId('kyc', 'kyc_outage_1')).query(entityStateQuery);
    expect(state).toMatchObject({ eventCount: 1, status: 'APPROVED' });
  }, 180_000);
});

