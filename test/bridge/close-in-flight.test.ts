/**
 * A webhook in flight when the bridge begins to close is answered with `Connection: close`, and the
 * bridge's close ends once that answer is out. Before (src/bridge/app.ts, the preClose and onSend
 * hooks), it was answered keep-alive and server.close() waited for the provider's client to drop the
 * idle socket: 70 s with undici, as long as the client liked with another (a test's stack close, a
 * SIGTERM). The client here never closes its side, so a close that waited for it never ends and the
 * test runs into its limit.
 */
import { connect, type Socket } from 'node:net';
import { loadConfig } from '../../src/config';
import { startBridge } from '../../src/bridge';
import { freePort } from '../../src/ports';
import { signWebhook } from '../helpers/webhooks';

/** Everything the server sends until it ends the socket. */
function readUntilEnd(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    socket.on('data', (chunk) => (got += chunk.toString('latin1')));
    socket.on('end', () => resolve(got));
    socket.on('error', reject);
  });
}

test('a webhook in flight when close begins is answered Connection: close, and the close does not wait for the client', async () => {
  const config = loadConfig({ TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` }); // nothing listens there: the webhook is answered 503
  const bridge = await startBridge(config, { port: 0 });
  const { hostname, port } = new URL(bridge.url);
  const body = JSON.stringify({ eventId: 'evt_inflight_1', eventType: 'CARDHOLDER_KYC_STATUS', createdAt: Date.now(), data: { id: 'kyc_inflight_1', kycStatus: 'APPROVED' } });
  const headers = Object.entries({ ...signWebhook(body, config.provider), host: `${hostname}:${port}`, connection: 'keep-alive', 'content-length': String(Buffer.byteLength(body)) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const answer = readUntilEnd(socket);
  // The request's head and half its body: the server has it in flight.
  socket.write(`POST /webhooks/provider HTTP/1.1\r\n${headers}\r\n${body.slice(0, 10)}`);
  await new Promise((r) => setTimeout(r, 200));
  const closed = bridge.close();
  socket.write(body.slice(10));
  const raw = await answer;
  await closed;
  const [head] = raw.split('\r\n\r\n');
  expect(head.split('\r\n')[0]).toMatch(/^HTTP\/1\.1 \d{3} /);
  expect(head.toLowerCase()).toContain('\r\nconnection: close');
  socket.destroy();
}, 30_000);
