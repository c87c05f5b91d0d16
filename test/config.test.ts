import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { optionsFromEnv } from '../src/client/from-env';
import { ConfigError, loadConfig, requireSecrets } from '../src/config';

describe('configuration', () => {
  test('defaults follow CONTRACTS §2', () => {
    const c = loadConfig({});
    expect(c.temporal).toMatchObject({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'card-issuing', tls: false });
    expect(c.provider).toMatchObject({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'key_sandbox', webhookSecret: 'secret_sandbox' });
    expect(c.sandbox).toEqual({ port: 4010, webhookUrl: 'http://127.0.0.1:4020/webhooks/provider' });
    expect(c.bridge.port).toBe(4020);
    expect(c.listenHost).toBe('127.0.0.1');
    expect(c.codec.isDevelopmentKey).toBe(true);
  });

  test.each([
    ['TEMPORAL_ADDRESS', 'localhost', /^configuration: TEMPORAL_ADDRESS must be host:port/],
    ['SANDBOX_PORT', '70000', /^configuration: SANDBOX_PORT must be a port between 1 and 65535$/],
    ['PROVIDER_BASE_URL', 'not a url', /^configuration: PROVIDER_BASE_URL must be an absolute URL/],
    ['PROVIDER_API_SECRET', 'hunter2', /^configuration: PROVIDER_API_SECRET must start with secret_$/],
    ['PAYLOAD_CODEC_KEY', 'c2hvcnQ=', /^configuration: PAYLOAD_CODEC_KEY must be 32 bytes encoded in base64/],
    ['LISTEN_HOST', 'everywhere', /^configuration: LISTEN_HOST must be an IP address/],
    ['TEMPORAL_TLS', 'maybe', /^configuration: TEMPORAL_TLS must be true or false$/],
  ])('%s=%s stops with one line naming the variable and the rule', (name, value, message) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  test('the secret never appears in an error about it', () => {
    expect(() => loadConfig({ PROVIDER_API_SECRET: 'leaky-value' })).toThrow(expect.objectContaining({ message: expect.not.stringContaining('leaky-value') }));
  });

  test('an API key implies TLS; the webhook secret defaults to the API secret', () => {
    const c = loadConfig({ TEMPORAL_API_KEY: 'k', PROVIDER_API_SECRET: 'secret_abc' });
    expect(c.temporal.tls).toBe(true);
    expect(c.provider.webhookSecret).toBe('secret_abc');
  });
});

describe('no missing secret fails open (outside development)', () => {
  const ROOT = join(__dirname, '..');
  /** The entry point as an operator starts it, with only `env` (no CARD_ISSUING_DEVELOPMENT unless given). */
  const start = (entry: string, env: Record<string, string>) =>
    spawnSync(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, entry)], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 60_000 });
  const key = () => randomBytes(32).toString('base64');

  test('a bridge without its webhook secret (nor the API secret) refuses to start, naming it; so does one on the development payload key', () => {
    const bare = start('src/bridge/server.ts', { PAYLOAD_CODEC_KEY: key(), SIGNAL_MAC_KEY: key(), TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(bare.status).toBe(2);
    expect(bare.stderr.trim()).toBe(
      'configuration: PROVIDER_WEBHOOK_SECRET must be set: outside development no secret falls back to its public default (set CARD_ISSUING_DEVELOPMENT=true only on a developer\'s machine)',
    );
    // Without the signal MAC key it would sign nothing as the provider's word (issue 50): named too.
    const noMac = start('src/bridge/server.ts', { PAYLOAD_CODEC_KEY: key(), PROVIDER_WEBHOOK_SECRET: 'whsec_0123456789', TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(noMac.status).toBe(2);
    expect(noMac.stderr).toMatch(/^configuration: SIGNAL_MAC_KEY must be set/);
    const devKey = start('src/bridge/server.ts', { PROVIDER_WEBHOOK_SECRET: 'whsec_0123456789', SIGNAL_MAC_KEY: key(), TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(devKey.status).toBe(2);
    expect(devKey.stderr).toMatch(/^configuration: PAYLOAD_CODEC_KEY must be set/);
  });

  test('a worker without the provider secret and its keys refuses to start, naming each', () => {
    const worker = start('src/worker.ts', { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(worker.status).toBe(2);
    expect(worker.stderr).toMatch(/^configuration: PROVIDER_API_SECRET, PAYLOAD_CODEC_KEY, PIN_SEAL_PRIVATE_KEY, CARD_ACTION_TRUSTED_KEYS, SIGNAL_MAC_KEY must be set/);
  });

  test('the rule names only what is missing, and the development switch lets the public defaults in', () => {
    const rule = requireSecrets('PROVIDER_WEBHOOK_SECRET', 'PAYLOAD_CODEC_KEY');
    // The API secret stands for the webhook secret when only it is set (CONTRACTS §2).
    expect(() => rule(loadConfig({ PROVIDER_API_SECRET: 'secret_live', PAYLOAD_CODEC_KEY: key() }))).not.toThrow();
    expect(() => rule(loadConfig({ PAYLOAD_CODEC_KEY: key() }))).toThrow(/^configuration: PROVIDER_WEBHOOK_SECRET must be set/);
    expect(() => rule(loadConfig({ CARD_ISSUING_DEVELOPMENT: 'true' }))).not.toThrow();
    expect(() => loadConfig({ CARD_ISSUING_DEVELOPMENT: 'maybe' })).toThrow(/CARD_ISSUING_DEVELOPMENT must be true or false/);
  });
});

describe('development is refused where it is dangerous (issue 50)', () => {
  const refusal = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  test('in a production build (NODE_ENV=production): one line naming the variable and the rule', () => {
    const message = refusal({ CARD_ISSUING_DEVELOPMENT: 'true', NODE_ENV: 'production' });
    expect(message).toBe("configuration: CARD_ISSUING_DEVELOPMENT must not be true with NODE_ENV=production: development takes public default secrets, so set it only on a developer's machine");
  });

  test("beside a real provider secret (any but the sandbox's), never naming it", () => {
    const message = refusal({ CARD_ISSUING_DEVELOPMENT: 'true', PROVIDER_API_SECRET: 'secret_live_0123456789' });
    expect(message).toMatch(/^configuration: CARD_ISSUING_DEVELOPMENT must not be true with a real PROVIDER_API_SECRET \(any but the sandbox's secret_sandbox\)/);
    expect(message).not.toContain('secret_live_0123456789');
    expect(message).not.toContain('\n');
  });

  test("a developer's machine keeps it: the sandbox's secret, given or defaulted, and any NODE_ENV but production", () => {
    expect(loadConfig({ CARD_ISSUING_DEVELOPMENT: 'true' }).development).toBe(true);
    expect(loadConfig({ CARD_ISSUING_DEVELOPMENT: 'true', PROVIDER_API_SECRET: 'secret_sandbox', NODE_ENV: 'development' }).development).toBe(true);
    // Without the switch, production and a real secret are what they should be.
    expect(loadConfig({ NODE_ENV: 'production', PROVIDER_API_SECRET: 'secret_live_0123456789' }).development).toBe(false);
  });

  test("a client's optionsFromEnv refuses the public development PIN key unless development is explicit", () => {
    const developmentPinKey = loadConfig({ CARD_ISSUING_DEVELOPMENT: 'true' }).pin.publicKey;
    const env = { PAYLOAD_CODEC_KEY: randomBytes(32).toString('base64'), PIN_SEAL_PUBLIC_KEY: developmentPinKey };
    expect(() => optionsFromEnv(env)).toThrow(
      expect.objectContaining({
        type: 'ValidationFailed',
        details: [{ errors: { PIN_SEAL_PUBLIC_KEY: expect.stringMatching(/^is the public development key, whose private half anyone has/) } }],
      }),
    );
    expect(optionsFromEnv({ ...env, CARD_ISSUING_DEVELOPMENT: 'true' }).pinKey?.publicKey).toBe(developmentPinKey);
    // A real key pair's public half is taken as before.
    const real = loadConfig({ PIN_SEAL_PRIVATE_KEY: randomBytes(32).toString('base64') }).pin.publicKey;
    expect(optionsFromEnv({ ...env, PIN_SEAL_PUBLIC_KEY: real }).pinKey?.publicKey).toBe(real);
  });

  test('a worker started so stops at once with that line (exit 2)', () => {
    const worker = spawnSync(process.execPath, [join(__dirname, '../node_modules/tsx/dist/cli.mjs'), join(__dirname, '../src/worker.ts')], {
      env: { PATH: process.env.PATH ?? '', CARD_ISSUING_DEVELOPMENT: 'true', NODE_ENV: 'production', TEMPORAL_ADDRESS: '127.0.0.1:1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(worker.status).toBe(2);
    expect(worker.stderr.trim()).toMatch(/^configuration: CARD_ISSUING_DEVELOPMENT must not be true with NODE_ENV=production/);
  });
});
