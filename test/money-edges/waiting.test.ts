/**
 * Waiting survives failed reads: a payout that left the wallet is followed to its end although
 * the provider's reads fail for a while (the poll activity running out of attempts) and answer
 * 404 for a while after creation (read-after-write lag). Only the flow's deadline ends a wait.
 */
import { entityWorkflowId } from '../../src/shared/ids';
import { uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { PROFILES, TIMINGS, faults, ledger, stackOn } from './helpers';

describe.each(PROFILES)('a waiting payout, on the %s profile', (profile) => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  test('404s for 25 s after creation and 8 s of failing reads do not fail it; it ends with the provider status', async () => {
    // No webhook reaches the bridge: the payout's entity workflow must learn the end by polling.
    stack = await stackOn(profile, { readLagMs: 25_000, webhook: { dropRate: 1 } });
    const merOrderNo = uniqueId('po').slice(0, 32);
    const input = { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 4000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819' };
    const handle = await stack.client.workflow.start('sendPayout', {
      taskQueue: stack.taskQueue,
      workflowId: `send-payout/${merOrderNo}`,
      args: [{ ...input, timings: { ...TIMINGS, deadlineMs: 120_000 } }],
    });
    await waitUntil(async () => (await ledger(stack)).totals.charged > 0, 30_000, 'the payout created');
    await faults(stack, { 'GET /payouts/{merOrderNo}': { errorRate: 1 } });
    await new Promise((r) => setTimeout(r, 8000));
    await faults(stack, {});
    const payout = await handle.result();
    expect(payout.status).toBe(profile === 'minimal' ? 'SUCCESS' : 'COMPLETED');

    const entity = await stack.client.workflow.getHandle(entityWorkflowId('payout', merOrderNo)).fetchHistory();
    const failedReads = (entity.events ?? []).filter((e) => e.activityTaskFailedEventAttributes);
    const failureTypes = new Set(failedReads.map((e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type));
    expect(failureTypes).toEqual(new Set(['NotFound', 'ServerError']));
    expect((await ledger(stack)).violations).toEqual([]);
  }, 120_000);
});
