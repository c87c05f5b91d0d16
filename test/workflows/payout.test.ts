import { createProviderClient, type ProviderClient } from '../../src/provider/client';
import type { Payout } from '../../src/provider-api';
import { workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { deliveries } from '../helpers/wait';

describe('trackPayout', () => {
  let stack: Stack;
  let provider: ProviderClient;
  afterEach(async () => {
    await provider?.close();
    await stack?.close();
  });

  const start = async (sandboxConfig: Record<string, unknown> = {}) => {
    stack = await startStack({ payoutProcessingMs: 300, ...sandboxConfig });
    provider = createProviderClient(stack.config.provider);
  };
  /** Creates a payout directly at the provider, as another service would. */
  const createPayout = async (payeeAccountNo = 'GB29NWBK60161331926819'): Promise<string> => {
    const merOrderNo = uniqueId('po').slice(0, 40);
    await provider.createPayout(
      { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 10_000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo },
      { idempotencyKey: merOrderNo },
    );
    return merOrderNo;
  };
  const track = (input: Record<string, unknown>): Promise<Payout> =>
    stack.client.workflow.execute('trackPayout', { taskQueue: stack.taskQueue, workflowId: uniqueId('track-payout'), args: [{ timings: FAST_TIMINGS, ...input }] });

  test('follows a payout to COMPLETED and answers the order', async () => {
    await start();
    const merOrderNo = await createPayout();
    const payout = await track({ merOrderNo });
    expect(payout).toMatchObject({ merOrderNo, status: 'COMPLETED', arriveAmount: 10_000 });
    expect(payout.completedAt).toEqual(expect.any(Number));
  });

  test('a payout that fails is a FAILED result with its reason, not a workflow failure', async () => {
    await start();
    const merOrderNo = await createPayout('FAIL0000001');
    const payout = await track({ merOrderNo });
    expect(payout).toMatchObject({ merOrderNo, status: 'FAILED', failureReason: expect.any(String) });
  });

  test('completes by polling when every webhook is dropped', async () => {
    await start({ webhook: { dropRate: 1 } });
    const merOrderNo = await createPayout();
    const payout = await track({ merOrderNo, timings: { ...FAST_TIMINGS, webhookWaitMs: 200 } });
    expect(payout.status).toBe('COMPLETED');
    expect((await deliveries(stack.control)).filter((d) => d.eventType === 'PAYOUT_COMPLETED').map((d) => d.status)).toEqual(['DROPPED']);
  });

  test('a payout that ended before tracking started is answered at once', async () => {
    await start();
    const merOrderNo = await createPayout();
    await stack.control('POST', `/payouts/${merOrderNo}/status`, { status: 'CANCELLED' });
    expect((await track({ merOrderNo })).status).toBe('CANCELLED');
  });

  test('an unknown merOrderNo fails NotFound; an empty one ValidationFailed before any call', async () => {
    await start();
    expect((await workflowFailure(track({ merOrderNo: 'po-unknown' }))).type).toBe('NotFound');
    // The spec gives merOrderNo no format; an empty one cannot name a payout.
    const invalid = await workflowFailure(track({ merOrderNo: '' }));
    expect(invalid.type).toBe('ValidationFailed');
    expect((invalid.details![0] as { errors: Record<string, string> }).errors).toHaveProperty('merOrderNo');
  });
});
