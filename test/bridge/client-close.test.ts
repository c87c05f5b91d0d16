/**
 * A client Connection closed while the SDK's retry of a failed call is still pending (a webhook
 * answered 503 during an outage, then the bridge shut down): the pending retry must end quietly.
 * Without src/temporal/client-interceptors.ts it throws grpc-js "Channel has been shut down" from a
 * timer, an uncaught exception that jest charges to the running test (the temporal-outage flake).
 */
import { loadConfig } from '../../src/config';
import { startBridge } from '../../src/bridge';
import { freePort } from '../../src/ports';
import { signWebhook } from '../helpers/webhooks';

describe('closing a Temporal client during an outage', () => {
  test('a bridge closed right after a 503 leaves no retry to throw on its closed connection', async () => {
    const config = loadConfig({ TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` }); // nothing listens there
    const bridge = await startBridge(config, { port: 0 });
    const uncaught: Error[] = [];
    const record = (err: Error) => uncaught.push(err);
    process.on('uncaughtException', record);
    try {
      const body = JSON.stringify({ eventId: 'evt_close_1', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id: 'kyc_close_1', kycStatus: 'APPROVED' } });
      const res = await fetch(`${bridge.url}/webhooks/provider`, { method: 'POST', headers: signWebhook(body, config.provider), body });
      expect(res.status).toBe(503);
      await bridge.close();
      // The SDK backs its retries off up to 5 s: wait out the longest.
      await new Promise((r) => setTimeout(r, 6000));
      expect(uncaught.map((e) => e.message)).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
    }
  }, 30_000);
});
