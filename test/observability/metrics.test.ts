/** /metrics, /health and /ready of a bridge, and the provider client's counters, over real HTTP. */
import { createProviderClient } from '../../src/provider/client';
import { HmacSha256Scheme } from '../../src/provider/signing';
import { createRegistry, providerMetrics, WEBHOOK_STEPS } from '../../src/observability/metrics';
import { startBridge } from '../../src/bridge';
import { freePort } from '../../src/ports';
import { loadConfig } from '../../src/config';
import { startStack, type Stack } from '../helpers/stack';

describe('metrics', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  test('the bridge counts webhooks by outcome, times each step of an accepted one, and answers liveness and readiness', async () => {
    stack = await startStack();
    const bridge = await startBridge(stack.config, { port: 0, metricsPort: await freePort() });
    try {
      const signer = new HmacSha256Scheme({ apiKey: stack.config.provider.apiKey, secret: stack.config.provider.webhookSecret });
      const body = JSON.stringify({ eventType: 'CARDHOLDER_KYC_STATUS', data: { id: 'kyc_metrics', kycStatus: 'APPROVED' } });
      const signed = { ...signer.sign({ method: 'POST', pathWithQuery: '/webhooks/provider', body }), 'content-type': 'application/json' };
      const post = (headers: Record<string, string>) => fetch(`${bridge.url}/webhooks/provider`, { method: 'POST', headers, body });
      expect((await post(signed)).status).toBe(200);
      expect((await post(signed)).status).toBe(200); // the same delivery again
      expect((await post({ ...signed, 'x-signature': 'forged' })).status).toBe(401);

      const metrics = await (await fetch(`${bridge.opsUrl}/metrics`)).text();
      expect(metrics).toMatch(/bridge_webhooks_total\{outcome="accepted",reason=""\} 1/);
      expect(metrics).toMatch(/bridge_webhooks_total\{outcome="duplicate",reason=""\} 1/);
      expect(metrics).toMatch(/bridge_webhooks_total\{outcome="refused",reason="BAD_SIGNATURE"\} 1/);
      expect(metrics).toMatch(/bridge_signal_duration_seconds_count 1/);
      // Each step of the one accepted webhook, once: the duplicate and the refusal time no step.
      for (const step of WEBHOOK_STEPS) expect(metrics).toMatch(new RegExp(`^bridge_webhook_step_seconds_count\\{step="${step}"\\} 1$`, 'm'));
      expect(metrics).toMatch(/^service_ready 1$/m);
      expect((await fetch(`${bridge.opsUrl}/health`)).status).toBe(200);
      expect(await (await fetch(`${bridge.opsUrl}/ready`)).json()).toEqual({ ready: true });
    } finally {
      await bridge.close();
    }
  });

  test('a bridge that cannot reach Temporal answers /ready 503 and exports service_ready 0', async () => {
    const config = loadConfig({ TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` }); // nothing listens there
    const bridge = await startBridge(config, { port: 0, metricsPort: await freePort() });
    try {
      expect((await fetch(`${bridge.opsUrl}/ready`)).status).toBe(503);
      expect(await (await fetch(`${bridge.opsUrl}/metrics`)).text()).toMatch(/^service_ready 0$/m);
      expect((await fetch(`${bridge.opsUrl}/health`)).status).toBe(200);
    } finally {
      await bridge.close();
    }
  });

  test('the provider client counts requests by endpoint and status, 429s, local refusals and the remaining budget', async () => {
    stack = await startStack({ rateLimit: { general: 2 } });
    const registry = createRegistry();
    const observer = providerMetrics(registry);
    // One client that always sends (to meet the provider's 429), one that refuses locally once it knows the window is spent.
    const provider = createProviderClient(stack.config.provider, { observer, failFastWhenBudgetSpent: false });
    const careful = createProviderClient(stack.config.provider, { observer });
    try {
      await provider.listCardBins();
      await provider.listCardBins();
      await expect(provider.listCardBins()).rejects.toMatchObject({ type: 'RateLimited', status: 429 });
      await expect(careful.listCardBins()).rejects.toMatchObject({ type: 'RateLimited', status: 429 });
      await expect(careful.listCardBins()).rejects.toMatchObject({ type: 'RateLimited', code: 'RATE_BUDGET_SPENT' });
      const text = await registry.metrics();
      expect(text).toMatch(/provider_requests_total\{endpoint="listCardBins",status="200"\} 2/);
      expect(text).toMatch(/provider_requests_total\{endpoint="listCardBins",status="429"\} 2/);
      expect(text).toMatch(/provider_rate_limited_total\{endpoint="listCardBins"\} 2/);
      expect(text).toMatch(/provider_rate_budget_refusals_total\{endpoint="listCardBins"\} 1/);
      expect(text).toMatch(/provider_rate_limit_remaining\{endpoint="listCardBins"\} 0/);
      expect(text).not.toMatch(/crd_|kyc_/);
    } finally {
      await provider.close();
      await careful.close();
    }
  });
});
