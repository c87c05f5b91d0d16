/**
 * Issue 51: after a final eSIM webhook, a read of the order that still shows an earlier status
 * (a read replica or cache behind the webhook) must not take the final status back. The sandbox
 * holds a slow order ISSUING for minutes; the provider's final word arrives first, signed as the
 * provider signs it, through the bridge: the flow's re-read of the order then shows ISSUING, as a
 * lagging read would. Waits on the flow's end; the orders are found in the sandbox's ledger.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { EsimOrder } from '../../src/provider-api';
import { createProviderClient } from '../../src/provider/client';
import { workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { signWebhook } from '../helpers/webhooks';

describe('a final eSIM webhook stands against a stale read of the order', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  /** A flow whose order the sandbox keeps ISSUING (PAID in the purchase's answer) far longer than the test. */
  async function stalledPurchase(): Promise<{ handle: WorkflowHandle; orderNo: string; esimNo: string }> {
    stack = await startStack({ esimSlowIssueMs: 600_000, esimWaitMs: 100 });
    const handle = await stack.client.workflow.start('purchaseEsim', {
      taskQueue: stack.taskQueue,
      workflowId: uniqueId('purchase-esim-stale'),
      args: [{ planNo: 'epln_slow', timings: { ...FAST_TIMINGS, webhookWaitMs: 60_000 } }],
    });
    const charge = async () => (await stack.control<{ entries: Array<{ kind: string; ref?: string }> }>('GET', '/ledger/entries')).entries.find((e) => e.kind === 'ESIM_CHARGE');
    await waitUntil(async () => (await charge()) !== undefined, 30_000, 'the wallet charged for the order');
    const orderNo = (await charge())!.ref!;
    const provider = createProviderClient(stack.config.provider);
    try {
      const order = await provider.getEsimOrder(orderNo);
      expect(order.status).toBe('ISSUING');
      return { handle, orderNo, esimNo: order.esimNo! };
    } finally {
      await provider.close();
    }
  }

  async function deliver(eventType: string, data: Record<string, unknown>): Promise<void> {
    const body = JSON.stringify({ eventId: uniqueId('evt_stale'), eventType, createdAt: Date.now(), data });
    const res = await fetch(`${stack.bridge.url}/webhooks/provider`, { method: 'POST', headers: signWebhook(body, stack.config.provider), body });
    expect(res.status).toBe(200);
  }

  test('ESIM_ISSUED, then a read showing ISSUING: the flow answers ISSUED with the webhook’s QR code', async () => {
    const { handle, orderNo, esimNo } = await stalledPurchase();
    const qrCode = 'LPA:1$smdp.sandbox.invalid$8900000000000000001';
    await deliver('ESIM_ISSUED', { orderNo, esimNo, iccid: '8900000000000000001', qrCode, status: 'ISSUED' });
    const order = (await handle.result()) as EsimOrder;
    expect(order).toMatchObject({ orderNo, esimNo, status: 'ISSUED', qrCode, iccid: '8900000000000000001', planNo: 'epln_slow' });
  }, 90_000);

  test('ESIM_REFUNDED, then a read showing ISSUING: the flow ends EsimRefunded, never a success', async () => {
    const { handle, orderNo, esimNo } = await stalledPurchase();
    await deliver('ESIM_REFUNDED', { orderNo, esimNo, status: 'REFUNDED', refundAmount: 300 });
    const failure = await workflowFailure(handle.result());
    expect(failure.type).toBe('EsimRefunded');
    expect(failure.details![0]).toMatchObject({ orderNo, esimNo });
  }, 90_000);
});
