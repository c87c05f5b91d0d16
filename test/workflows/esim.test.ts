import type { EsimOrder } from '../../src/provider-api';
import { entityWorkflowId } from '../../src/shared/ids';
import { entityStateQuery } from '../../src/shared/messages';
import { workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { deliveries } from '../helpers/wait';

describe('purchaseEsim and rechargeEsim', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const run = (type: 'purchaseEsim' | 'rechargeEsim', input: Record<string, unknown>, workflowId = uniqueId(type)): Promise<EsimOrder> =>
    stack.client.workflow.execute(type, { taskQueue: stack.taskQueue, workflowId, args: [{ timings: FAST_TIMINGS, ...input }] });
  const wallet = async (): Promise<number> => (await stack.control('GET', '/wallet')).availableBalance;

  test('a purchase answers the ISSUED order with its QR code, charged once', async () => {
    stack = await startStack({ esimIssueMs: 100 });
    const before = await wallet();
    const order = await run('purchaseEsim', { planNo: 'epln_global_1gb' });
    expect(order).toMatchObject({ type: 'PURCHASE', status: 'ISSUED', planNo: 'epln_global_1gb', amount: 450 });
    expect(order.esimNo).toMatch(/^esim_/);
    expect(order.qrCode).toEqual(expect.any(String));
    expect(await wallet()).toBe(before - 450);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });

  test('a slow issuance answered PAID completes by the ESIM_ISSUED webhook', async () => {
    stack = await startStack({ esimSlowIssueMs: 1500, esimWaitMs: 300 });
    const order = await run('purchaseEsim', { planNo: 'epln_slow' });
    expect(order.status).toBe('ISSUED');
    expect(order.iccid).toEqual(expect.any(String));
    const state = await stack.client.workflow.getHandle(entityWorkflowId('esimOrder', order.orderNo)).query(entityStateQuery);
    expect(state.status).toBe('ISSUED');
  });

  test('a slow issuance completes by polling when every webhook is dropped', async () => {
    stack = await startStack({ esimSlowIssueMs: 1500, esimWaitMs: 300, webhook: { dropRate: 1 } });
    const order = await run('purchaseEsim', { planNo: 'epln_slow', timings: { ...FAST_TIMINGS, webhookWaitMs: 300 } });
    expect(order.status).toBe('ISSUED');
    expect((await deliveries(stack.control)).filter((d) => d.eventType === 'ESIM_ISSUED').map((d) => d.status)).toEqual(['DROPPED']);
  });

  test('a failed issuance ends EsimRefunded with the refund in its details, and the wallet is whole again', async () => {
    stack = await startStack({ esimIssueMs: 100 });
    const before = await wallet();
    const failure = await workflowFailure(run('purchaseEsim', { planNo: 'epln_fail' }));
    expect(failure.type).toBe('EsimRefunded');
    expect(failure.details![0]).toMatchObject({ orderNo: expect.stringMatching(/^eord_/), refundAmount: 300 });
    expect(await wallet()).toBe(before);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });

  test('a failed issuance answered PAID ends EsimRefunded through the ESIM_REFUNDED webhook', async () => {
    stack = await startStack({ esimIssueMs: 800, esimWaitMs: 200 });
    const failure = await workflowFailure(run('purchaseEsim', { planNo: 'epln_fail' }));
    expect(failure.type).toBe('EsimRefunded');
    expect(failure.details![0]).toMatchObject({ refundAmount: 300 });
  });

  test('a sold-out plan fails PlanUnavailable with no charge; a bad planNo fails ValidationFailed before any call', async () => {
    stack = await startStack();
    const before = await wallet();
    expect((await workflowFailure(run('purchaseEsim', { planNo: 'epln_soldout' }))).type).toBe('PlanUnavailable');
    expect(await wallet()).toBe(before);
    const invalid = await workflowFailure(run('purchaseEsim', { planNo: 'plan-1' }));
    expect(invalid.type).toBe('ValidationFailed');
    expect((invalid.details![0] as { errors: Record<string, string> }).errors).toHaveProperty('planNo');
  });

  test('an underfunded wallet fails InsufficientFunds', async () => {
    stack = await startStack();
    await stack.control('POST', '/wallet', { amount: -(await wallet()) + 100 });
    expect((await workflowFailure(run('purchaseEsim', { planNo: 'epln_global_1gb' }))).type).toBe('InsufficientFunds');
  });

  test('the same caller key twice gives the same order, charged once; after a refund the key is terminal', async () => {
    stack = await startStack({ esimIssueMs: 100 });
    const before = await wallet();
    const idempotencyKey = uniqueId('esim-key').slice(0, 60);
    const first = await run('purchaseEsim', { planNo: 'epln_asia_5gb', idempotencyKey });
    const again = await run('purchaseEsim', { planNo: 'epln_asia_5gb', idempotencyKey });
    expect(again.orderNo).toBe(first.orderNo);
    expect(await wallet()).toBe(before - 1200);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);

    const failedKey = uniqueId('esim-fail').slice(0, 60);
    expect((await workflowFailure(run('purchaseEsim', { planNo: 'epln_fail', idempotencyKey: failedKey }))).type).toBe('EsimRefunded');
    const terminal = await workflowFailure(run('purchaseEsim', { planNo: 'epln_fail', idempotencyKey: failedKey }));
    expect(terminal.type).toBe('IdempotencyKeyTerminal');
    expect(terminal.message).toMatch(/new key/);
  });

  // An attempt of the charge makes two or three calls (reconcile, then post), so about 45% of attempts fail, and
  // its retries back off 1, 2, 4, 8, 16 s and then every 20 s: one purchase in ~75 needs 30 s, one in ~1,300 over
  // 110 s (measured and computed). The purchases run side by side, so the test waits for the slowest, not their sum,
  // and its time limit covers 14 failed attempts in a row (4 × 0.45^14 ≈ 1 run in 20,000).
  test('purchases with 30% of provider calls failing (half after their side effect) are each charged once', async () => {
    stack = await startStack({ esimIssueMs: 50 });
    const before = await wallet();
    await stack.control('PUT', '/config', { faults: { errorRate: 0.3 } });
    const orders = await Promise.all([0, 1, 2, 3].map(() => run('purchaseEsim', { planNo: 'epln_global_1gb' })));
    await stack.control('PUT', '/config', { faults: { errorRate: 0 } });
    expect(orders.map((o) => o.status)).toEqual(Array(4).fill('ISSUED'));
    expect(new Set(orders.map((o) => o.orderNo)).size).toBe(4);
    expect(await wallet()).toBe(before - 4 * 450);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  }, 260_000);

  test('a recharge of an issued eSIM answers the ISSUED recharge order', async () => {
    stack = await startStack({ esimIssueMs: 100 });
    const purchased = await run('purchaseEsim', { planNo: 'epln_eu_10gb' });
    const before = await wallet();
    const recharged = await run('rechargeEsim', { esimNo: purchased.esimNo });
    expect(recharged).toMatchObject({ type: 'RECHARGE', status: 'ISSUED', esimNo: purchased.esimNo, planNo: 'epln_eu_10gb' });
    expect(recharged.orderNo).not.toBe(purchased.orderNo);
    expect(await wallet()).toBe(before - 1990);
  });

  test('a recharge answered PAID completes by the ESIM_RECHARGED webhook', async () => {
    stack = await startStack({ esimIssueMs: 100 });
    const purchased = await run('purchaseEsim', { planNo: 'epln_global_1gb' });
    await stack.control('PUT', '/config', { esimIssueMs: 800, esimWaitMs: 200 });
    const recharged = await run('rechargeEsim', { esimNo: purchased.esimNo });
    expect(recharged.status).toBe('ISSUED');
    expect(recharged.type).toBe('RECHARGE');
  });
});
