/**
 * The keys' configuration (docs/operations.md, "Rotating keys" and "PIN keys"): retired payload
 * keys and PIN private keys by id, a PIN key pair apart from every payload key, its two halves
 * agreeing, the codec endpoint refused a PIN private key, and the retired card-seal key told.
 * Units without I/O (the HPKE calls run in this process).
 */
import { randomBytes } from 'node:crypto';
import { assertCodecEndpointAuth, assertPinKeys, loadConfig, requireSecrets } from '../../src/config';
import { parseKeyList } from '../../src/codec/keyring';
import { newPinKeyPair, PinOpener, sealPin } from '../../src/codec/card-secrets';
import { optionsFromEnv } from '../../src/client/from-env';

const key = () => randomBytes(32).toString('base64');

describe('key rotation configuration', () => {
  const A = key();
  const B = key();
  const P1 = newPinKeyPair();
  const P2 = newPinKeyPair();

  test('PAYLOAD_CODEC_PREVIOUS_KEYS and PIN_SEAL_PREVIOUS_KEYS fill the keyrings by id; the public key is the private key\'s', () => {
    const c = loadConfig({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_KEY_ID: 'b', PAYLOAD_CODEC_PREVIOUS_KEYS: `a:${A}`, PIN_SEAL_PRIVATE_KEY: P2.privateKey, PIN_SEAL_KEY_ID: 'p2', PIN_SEAL_PREVIOUS_KEYS: ` p1:${P1.privateKey} ` });
    expect(c.codec).toMatchObject({ keyId: 'b', key: B, previousKeys: { a: A } });
    expect(c.pin).toEqual({ keyId: 'p2', publicKey: P2.publicKey, privateKey: P2.privateKey, previousKeys: { p1: P1.privateKey }, isDevelopmentKey: false });
    expect(assertPinKeys(c)).toEqual({ keyId: 'p2', privateKey: P2.privateKey, previousKeys: { p1: P1.privateKey } });
  });

  test.each([
    ['PAYLOAD_CODEC_PREVIOUS_KEYS', 'a', /^configuration: PAYLOAD_CODEC_PREVIOUS_KEYS must be id:base64 pairs separated by commas; entry 1 has no id/],
    ['PAYLOAD_CODEC_PREVIOUS_KEYS', 'a:c2hvcnQ=', /PAYLOAD_CODEC_PREVIOUS_KEYS .*the key of "a" is not 32 bytes/],
    ['PAYLOAD_CODEC_PREVIOUS_KEYS', `a:${A},a:${A}`, /PAYLOAD_CODEC_PREVIOUS_KEYS names the key id "a" twice/],
    ['PAYLOAD_CODEC_PREVIOUS_KEYS', `b:${A}`, /PAYLOAD_CODEC_PREVIOUS_KEYS names "b", the current PAYLOAD_CODEC_KEY_ID/],
    ['PIN_SEAL_PREVIOUS_KEYS', `bad id:${P1.privateKey}`, /^configuration: PIN_SEAL_PREVIOUS_KEYS must be id:base64 pairs/],
    ['PIN_SEAL_PRIVATE_KEY', 'c2hvcnQ=', /^configuration: PIN_SEAL_PRIVATE_KEY must be an X25519 key: 32 bytes encoded in base64/],
    ['PIN_SEAL_PUBLIC_KEY', P1.publicKey, /^configuration: PIN_SEAL_PUBLIC_KEY is not the public key of PIN_SEAL_PRIVATE_KEY/],
  ])('%s=%s is refused naming the variable and the rule, never the key', (name, value, message) => {
    const run = () => loadConfig({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_KEY_ID: 'b', PIN_SEAL_PRIVATE_KEY: P2.privateKey, [name]: value });
    expect(run).toThrow(message);
    try {
      run();
    } catch (err) {
      for (const secret of [A, B, P1.privateKey, P2.privateKey]) expect((err as Error).message).not.toContain(secret);
    }
  });

  test('a PIN private key equal to a payload key, current or retired, is refused: the codec endpoint holds those', () => {
    expect(() => loadConfig({ PAYLOAD_CODEC_KEY: B, PIN_SEAL_PRIVATE_KEY: B })).toThrow(/PIN_SEAL_PRIVATE_KEY .* equals a payload codec key/);
    expect(() => loadConfig({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_PREVIOUS_KEYS: `a:${A}`, PIN_SEAL_PRIVATE_KEY: P2.privateKey, PIN_SEAL_PREVIOUS_KEYS: `old:${A}` })).toThrow(/equals a payload codec key/);
  });

  test('a worker needs PIN_SEAL_PRIVATE_KEY outside development; the public key alone seals but opens nothing; development has its own pair', () => {
    const callerOnly = loadConfig({ PAYLOAD_CODEC_KEY: B, PIN_SEAL_PUBLIC_KEY: P1.publicKey, PIN_SEAL_KEY_ID: 'p1' });
    expect(callerOnly.pin).toEqual({ keyId: 'p1', publicKey: P1.publicKey, isDevelopmentKey: false });
    expect(() => assertPinKeys(callerOnly)).toThrow(/^configuration: PIN_SEAL_PRIVATE_KEY must be set on a worker/);
    expect(() => requireSecrets('PIN_SEAL_PRIVATE_KEY')(loadConfig({ PAYLOAD_CODEC_KEY: B }))).toThrow(/PIN_SEAL_PRIVATE_KEY must be set: outside development/);
    const dev = loadConfig({});
    expect(dev.pin.isDevelopmentKey).toBe(true);
    expect(assertPinKeys(dev).privateKey).not.toBe(dev.codec.key);
  });

  test('the codec endpoint refuses to start with a PIN private key in its environment', () => {
    const config = loadConfig({ PAYLOAD_CODEC_KEY: B, CODEC_AUTH_TOKEN: 'a-token-of-sixteen+' });
    expect(() => assertCodecEndpointAuth(config, { PIN_SEAL_PRIVATE_KEY: P1.privateKey })).toThrow(/PIN_SEAL_PRIVATE_KEY must not be given to the codec endpoint/);
    expect(() => assertCodecEndpointAuth(config, { PIN_SEAL_PREVIOUS_KEYS: `p1:${P1.privateKey}` })).toThrow(/must not be given to the codec endpoint/);
    expect(() => assertCodecEndpointAuth(config, {})).not.toThrow();
  });

  test("1.x's card-seal settings are named as retired, not read", () => {
    const c = loadConfig({ PAYLOAD_CODEC_KEY: B, CARD_SEAL_KEY: A, CARD_SEAL_KEY_ID: 's1' });
    expect(c.retiredSettings).toEqual(['CARD_SEAL_KEY', 'CARD_SEAL_KEY_ID']);
    expect(JSON.stringify(c)).not.toContain(A);
  });

  test('a sealed PIN names its key id and opens with that key retired; not with another pair, nor once the key is deleted', async () => {
    const sealed = await sealPin('4821', { keyId: 'p1', publicKey: P1.publicKey }, 'card/crd_1');
    expect(sealed.keyId).toBe('p1');
    expect(JSON.stringify(sealed)).not.toContain('4821');
    const rotated = new PinOpener({ keyId: 'p2', privateKey: P2.privateKey, previousKeys: { p1: P1.privateKey } });
    expect(JSON.stringify(rotated)).not.toContain(P1.privateKey);
    await expect(rotated.open(sealed, 'card/crd_1')).resolves.toBe('4821');
    await expect(new PinOpener({ keyId: 'p2', privateKey: P2.privateKey }).open(sealed, 'card/crd_1')).rejects.toThrow(/PIN key id "p1", which the workers do not hold \(known: p2\)/);
    await expect(new PinOpener({ keyId: 'p1', privateKey: P2.privateKey }).open(sealed, 'card/crd_1')).rejects.toThrow(/does not open/);
    // The key id is bound into the box: relabelled, it does not open under the other id either.
    await expect(new PinOpener({ keyId: 'p2', privateKey: P1.privateKey }).open({ ...sealed, keyId: 'p2' }, 'card/crd_1')).rejects.toThrow(/does not open/);
    // So are the card and the expiry: for another card, or with its expiry moved, it opens for no one.
    await expect(rotated.open(sealed, 'card/crd_2')).rejects.toThrow(/does not open for card\/crd_2/);
    await expect(rotated.open({ ...sealed, exp: sealed.exp + 60_000 }, 'card/crd_1')).rejects.toThrow(/does not open/);
    // A box from before the binding (no expiry) is refused, never opened unbound.
    const { exp: _exp, ...unbound } = sealed;
    await expect(rotated.open(unbound as typeof sealed, 'card/crd_1')).rejects.toThrow(/not bound to a card and an expiry/);
  });

  test('parseKeyList reads what operators write', () => {
    expect(parseKeyList(undefined)).toBeUndefined();
    expect(parseKeyList(' ')).toBeUndefined();
    expect(parseKeyList(`2026-10:${A}, 2026-09:${B}`)).toEqual({ '2026-10': A, '2026-09': B });
  });

  test("the client's optionsFromEnv reads the same variables and names a bad one", () => {
    const opts = optionsFromEnv({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_KEY_ID: 'b', PAYLOAD_CODEC_PREVIOUS_KEYS: `a:${A}`, PIN_SEAL_PUBLIC_KEY: P2.publicKey, PIN_SEAL_KEY_ID: 'p2' });
    expect(opts.codec).toEqual({ keyId: 'b', key: B, previousKeys: { a: A } });
    expect(opts.pinKey).toEqual({ keyId: 'p2', publicKey: P2.publicKey });
    expect(optionsFromEnv({ PAYLOAD_CODEC_KEY: B }).pinKey).toBeUndefined();
    expect(() => optionsFromEnv({ PAYLOAD_CODEC_KEY: B, PIN_SEAL_PUBLIC_KEY: 'c2hvcnQ=' })).toThrow(/PIN_SEAL_PUBLIC_KEY must be an X25519 public key/);
    expect(() => optionsFromEnv({ PAYLOAD_CODEC_KEY: B, PIN_SEAL_PUBLIC_KEY: P2.publicKey, PIN_SEAL_KEY_ID: 'bad id' })).toThrow(/PIN_SEAL_KEY_ID must be 1-32 characters/);
  });
});
