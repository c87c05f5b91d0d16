/**
 * The keys' configuration (docs/operations.md, "Rotating keys"): retired payload and card-seal
 * keys by id, a card-seal key apart from every payload key, and the codec endpoint refused the
 * card-seal key. Units without I/O.
 */
import { randomBytes } from 'node:crypto';
import { assertCodecEndpointAuth, assertSealKey, loadConfig } from '../../src/config';
import { parseKeyList } from '../../src/codec/keyring';
import { ValueSealer } from '../../src/codec/sealed-value';
import { optionsFromEnv } from '../../src/client/from-env';

const key = () => randomBytes(32).toString('base64');

describe('key rotation configuration', () => {
  const A = key();
  const B = key();
  const S1 = key();
  const S2 = key();

  test('PAYLOAD_CODEC_PREVIOUS_KEYS and CARD_SEAL_PREVIOUS_KEYS fill the keyrings by id', () => {
    const c = loadConfig({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_KEY_ID: 'b', PAYLOAD_CODEC_PREVIOUS_KEYS: `a:${A}`, CARD_SEAL_KEY: S2, CARD_SEAL_KEY_ID: 's2', CARD_SEAL_PREVIOUS_KEYS: ` s1:${S1} ` });
    expect(c.codec).toMatchObject({ keyId: 'b', key: B, previousKeys: { a: A } });
    expect(c.seal).toMatchObject({ keyId: 's2', key: S2, previousKeys: { s1: S1 }, isDevelopmentKey: false });
  });

  test.each([
    ['PAYLOAD_CODEC_PREVIOUS_KEYS', 'a', /^configuration: PAYLOAD_CODEC_PREVIOUS_KEYS must be id:base64 pairs separated by commas; entry 1 has no id/],
    ['PAYLOAD_CODEC_PREVIOUS_KEYS', 'a:c2hvcnQ=', /PAYLOAD_CODEC_PREVIOUS_KEYS .*the key of "a" is not 32 bytes/],
    ['PAYLOAD_CODEC_PREVIOUS_KEYS', `a:${A},a:${A}`, /PAYLOAD_CODEC_PREVIOUS_KEYS names the key id "a" twice/],
    ['PAYLOAD_CODEC_PREVIOUS_KEYS', `b:${A}`, /PAYLOAD_CODEC_PREVIOUS_KEYS names "b", the current PAYLOAD_CODEC_KEY_ID/],
    ['CARD_SEAL_PREVIOUS_KEYS', `bad id:${S1}`, /^configuration: CARD_SEAL_PREVIOUS_KEYS must be id:base64 pairs/],
    ['CARD_SEAL_KEY', 'c2hvcnQ=', /^configuration: CARD_SEAL_KEY must be 32 bytes encoded in base64/],
  ])('%s=%s is refused naming the variable and the rule, never the key', (name, value, message) => {
    const run = () => loadConfig({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_KEY_ID: 'b', CARD_SEAL_KEY: S2, [name]: value });
    expect(run).toThrow(message);
    try {
      run();
    } catch (err) {
      for (const secret of [A, B, S1, S2]) expect((err as Error).message).not.toContain(secret);
    }
  });

  test('a card-seal key equal to a payload key, current or retired, is refused: the codec endpoint holds those', () => {
    expect(() => loadConfig({ PAYLOAD_CODEC_KEY: B, CARD_SEAL_KEY: B })).toThrow(/CARD_SEAL_KEY .* equals a payload codec key/);
    expect(() => loadConfig({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_PREVIOUS_KEYS: `a:${A}`, CARD_SEAL_KEY: S2, CARD_SEAL_PREVIOUS_KEYS: `old:${A}` })).toThrow(/equals a payload codec key/);
  });

  test('with a real payload key the worker needs CARD_SEAL_KEY; development has its own seal key, apart from the payload one', () => {
    expect(() => assertSealKey(loadConfig({ PAYLOAD_CODEC_KEY: B }))).toThrow(/^configuration: CARD_SEAL_KEY must be set when PAYLOAD_CODEC_KEY is/);
    const dev = loadConfig({});
    expect(assertSealKey(dev).isDevelopmentKey).toBe(true);
    expect(dev.seal!.key).not.toBe(dev.codec.key);
  });

  test('the codec endpoint refuses to start with a card-seal key in its environment', () => {
    const config = loadConfig({ PAYLOAD_CODEC_KEY: B, CODEC_AUTH_TOKEN: 'a-token-of-sixteen+' });
    expect(() => assertCodecEndpointAuth(config, { CARD_SEAL_KEY: S1 })).toThrow(/CARD_SEAL_KEY must not be given to the codec endpoint/);
    expect(() => assertCodecEndpointAuth(config, {})).not.toThrow();
  });

  test('a sealed value names its key id and opens with that key retired; not with the payload keys', () => {
    const old = new ValueSealer({ keyId: 's1', key: S1 });
    const sealed = old.seal({ cardNumber: '4111111111111111' });
    expect(sealed.keyId).toBe('s1');
    expect(JSON.stringify(old)).not.toContain(S1);
    const rotated = new ValueSealer({ keyId: 's2', key: S2, previousKeys: { s1: S1 } });
    expect(rotated.unseal(sealed)).toEqual({ cardNumber: '4111111111111111' });
    expect(rotated.seal(1).keyId).toBe('s2');
    expect(() => new ValueSealer({ keyId: 'b', key: B, previousKeys: { a: A } }).unseal(sealed)).toThrow(/card-seal key id "s1", which this sealer does not hold/);
    expect(() => new ValueSealer({ keyId: 's1', key: A }).unseal(sealed)).toThrow(/authentication failed/);
  });

  test('parseKeyList reads what operators write', () => {
    expect(parseKeyList(undefined)).toBeUndefined();
    expect(parseKeyList(' ')).toBeUndefined();
    expect(parseKeyList(`2026-10:${A}, 2026-09:${B}`)).toEqual({ '2026-10': A, '2026-09': B });
  });

  test("the client's optionsFromEnv reads the same variables and names a bad one", () => {
    const opts = optionsFromEnv({ PAYLOAD_CODEC_KEY: B, PAYLOAD_CODEC_KEY_ID: 'b', PAYLOAD_CODEC_PREVIOUS_KEYS: `a:${A}`, CARD_SEAL_KEY: S2, CARD_SEAL_KEY_ID: 's2', CARD_SEAL_PREVIOUS_KEYS: `s1:${S1}` });
    expect(opts.codec).toEqual({ keyId: 'b', key: B, previousKeys: { a: A } });
    expect(opts.sealKeys).toEqual({ keyId: 's2', key: S2, previousKeys: { s1: S1 } });
    expect(() => optionsFromEnv({ PAYLOAD_CODEC_KEY: B, CARD_SEAL_KEY: S2, CARD_SEAL_PREVIOUS_KEYS: 'nope' })).toThrow(/CARD_SEAL_PREVIOUS_KEYS must be id:base64 pairs/);
    expect(() => optionsFromEnv({ PAYLOAD_CODEC_KEY: B, CARD_SEAL_KEY: 'c2hvcnQ=' })).toThrow(/CARD_SEAL_KEY must be 32 bytes/);
  });
});
