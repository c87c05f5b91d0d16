/** The onboarding relay's signature (src/nexus/relay-token.ts): made by our handler, checked by the relay's activities. */
import { relayToken, relayTokenValid } from '../../src/nexus/relay-token';

const key = (fill: number) => Buffer.alloc(32, fill).toString('base64');
const codec = { keyId: 'k2', key: key(2), previousKeys: { k1: key(1) } };

test('a token is valid for its key and run only, under the key it was made with or a retired one still held', () => {
  const token = relayToken(codec, 'order-1', 'run-a');
  expect(token).toMatch(/^k2\./);
  expect(relayTokenValid(codec, token, 'order-1', 'run-a')).toBe(true);
  expect(relayTokenValid(codec, token, 'order-1', 'run-b')).toBe(false);
  expect(relayTokenValid(codec, token, 'order-2', 'run-a')).toBe(false);
  // Made before a rotation: valid while the retired key is kept, not after.
  const old = relayToken({ keyId: 'k1', key: key(1) }, 'order-1', 'run-a');
  expect(relayTokenValid(codec, old, 'order-1', 'run-a')).toBe(true);
  expect(relayTokenValid({ keyId: 'k2', key: key(2) }, old, 'order-1', 'run-a')).toBe(false);
});

test('a token made with another key, forged, cut or absent is refused', () => {
  expect(relayTokenValid(codec, relayToken({ keyId: 'k2', key: key(9) }, 'order-1', 'run-a'), 'order-1', 'run-a')).toBe(false);
  expect(relayTokenValid(codec, 'k2.forged', 'order-1', 'run-a')).toBe(false);
  expect(relayTokenValid(codec, relayToken(codec, 'order-1', 'run-a').slice(0, -4), 'order-1', 'run-a')).toBe(false);
  for (const token of [undefined, null, 42, '', 'k2', 'nokey.abc']) expect(relayTokenValid(codec, token, 'order-1', 'run-a')).toBe(false);
});
