/**
 * A flow waiting on a provider status the spec does not list raises an operator signal before its
 * deadline (issue 21): the ProviderStatus search attribute, a log line, and the counter
 * provider_status_unknown on the worker's /metrics. The provider here is the sandbox's divergent
 * profile, which words a payout still on its way SUBMITTED.
 */
import { createProviderClient } from '../../src/provider/client';
import { freePort } from '../../src/ports';
import { PROVIDER_STATUS } from '../../src/shared/search-attributes';
import { spawnWorker } from '../helpers/worker-process';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

describe('a status we do not know', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  test('a payout the provider calls SUBMITTED: trackPayout keeps waiting, and the operator sees it in the search attribute and the metric', async () => {
    stack = await startStack({ profile: 'divergent', payoutProcessingMs: 600_000 });
    await stack.stopWorkers();
    const metricsPort = await freePort();
    const worker = spawnWorker(stack, { METRICS_PORT: String(metricsPort) });
    const provider = createProviderClient(stack.config.provider);
    try {
      const merOrderNo = uniqueId('po').slice(0, 40);
      const body = { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 10_000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819' };
      expect((await provider.createPayout(body, { idempotencyKey: merOrderNo })).status).toBe('SUBMITTED');
      const handle = await stack.client.workflow.start('trackPayout', {
        taskQueue: stack.taskQueue,
        workflowId: uniqueId('track-unknown'),
        args: [{ merOrderNo, timings: { ...FAST_TIMINGS, webhookWaitMs: 200 } }],
      });
      // The entity workflow's poll reads SUBMITTED and tells the flow, which records it.
      const metric = async () => {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return /^provider_status_unknown\{[^}]*kind="payout"[^}]*workflowType="trackPayout"[^}]*\} [1-9]/m.test(text);
      };
      await waitUntil(metric, 120_000, 'provider_status_unknown for the payout');
      expect((await handle.describe()).typedSearchAttributes.get(PROVIDER_STATUS)).toBe('SUBMITTED');
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await stack.control('POST', `/payouts/${merOrderNo}/status`, { status: 'SUCCESS' });
      expect((await handle.result()).status).toBe('SUCCESS');
    } finally {
      await provider.close();
      await worker.stop();
    }
  }, 240_000);
});
