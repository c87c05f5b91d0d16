import { ConfigError, loadConfig } from '../src/config';

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
