/** sendPayout on the real server, with the sandbox's ledger and stats as the truth of what moved. */
import type { PayoutAnswer } from '../../src/provider/answers';
import type { SendPayoutInput } from '../../src/shared/types';
import { workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { spawnWorker } from '../helpers/worker-process';

describe('sendPayout', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const request = (extra: Partial<SendPayoutInput> = {}): SendPayoutInput => ({
    merOrderNo: uniqueId('po').slice(0, 40),
    paymentType: 'BANK_TRANSFER',
    arriveCurrency: 'EUR',
    arriveAmount: 10_000,
    payeeFirstName: 'Ada',
    payeeLastName: 'Lovelace',
    payeeAccountNo: 'GB29NWBK60161331926819',
    timings: FAST_TIMINGS,
    ...extra,
  });
  const send = (input: SendPayoutInput, workflowId = uniqueId('send-payout')): Promise<PayoutAnswer> =>
    stack.client.workflow.execute('sendPayout', { taskQueue: stack.taskQueue, workflowId, args: [input] });
  const payoutRequests = async (): Promise<number> => (await stack.control('GET', '/stats')).endpoints.createPayout?.requests ?? 0;

  test.each(['contract', 'minimal'] as const)('creates the payout and ends with its success status (%s profile), debiting the wallet once', async (profile) => {
    stack = await startStack({ profile, payoutProcessingMs: 200 });
    const before = (await stack.control('GET', '/wallet')).availableBalance;
    const payout = await send(request());
    expect(payout.status).toBe(profile === 'minimal' ? 'SUCCESS' : 'COMPLETED');
    expect(payout.settleAmount).toBeGreaterThan(0);
    expect((await stack.control('GET', '/wallet')).availableBalance).toBe(before - payout.settleAmount!);
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });

  test('a payout the provider fails is a FAILED result with its reason, and the money comes back', async () => {
    stack = await startStack({ payoutProcessingMs: 200 });
    const before = (await stack.control('GET', '/wallet')).availableBalance;
    const payout = await send(request({ payeeAccountNo: 'FAIL0000001' }));
    expect(payout).toMatchObject({ status: 'FAILED', failureReason: expect.any(String) });
    expect((await stack.control('GET', '/wallet')).availableBalance).toBe(before);
  });

  test('a payout beyond the wallet is a FAILED result saying how much was missing', async () => {
    stack = await startStack({ payoutProcessingMs: 200 });
    const { availableBalance } = await stack.control('GET', '/wallet');
    await stack.control('POST', '/wallet', { amount: -(availableBalance - 1000) });
    const payout = await send(request());
    expect(payout).toMatchObject({ status: 'FAILED', failureReason: expect.stringContaining('INSUFFICIENT_FUNDS') });
    expect((payout as PayoutAnswer & { shortfall?: number }).shortfall).toBe(payout.settleAmount! - 1000);
    expect((await stack.control('GET', '/wallet')).availableBalance).toBe(1000);
  });

  test('the same caller key twice creates one payout; the second flow answers the first one', async () => {
    stack = await startStack({ payoutProcessingMs: 200 });
    const before = (await stack.control('GET', '/wallet')).availableBalance;
    const input = request({ idempotencyKey: uniqueId('key').slice(0, 40) });
    const [first, second] = await Promise.all([send(input), send(input)]);
    expect(second.merOrderNo).toBe(first.merOrderNo);
    expect(second.status).toBe(first.status);
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.violations).toEqual([]);
    expect(ledger.totals.charged).toBe(first.settleAmount);
    expect((await stack.control('GET', '/wallet')).availableBalance).toBe(before - first.settleAmount!);
  });

  test('retries after answers lost (500s, half of them after the payout was created) create the payout once', async () => {
    stack = await startStack({ payoutProcessingMs: 200 });
    const before = (await stack.control('GET', '/wallet')).availableBalance;
    // Every POST /payouts answers 500, half of them after the payout was created; the lookups that
    // come before each POST answer.
    await stack.control('PUT', '/config', { faults: { endpoints: { 'POST /payouts': { errorRate: 1 } } } });
    const flow = send(request());
    await new Promise((r) => setTimeout(r, 3000));
    expect(await payoutRequests()).toBeGreaterThan(0);
    await stack.control('PUT', '/config', { faults: { endpoints: { 'POST /payouts': { errorRate: 0 } } } });
    const payout = await flow;
    expect(payout.status).toBe('COMPLETED');
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.violations).toEqual([]);
    expect(ledger.totals.charged).toBe(payout.settleAmount);
    expect((await stack.control('GET', '/wallet')).availableBalance).toBe(before - payout.settleAmount!);
  });

  test('a worker killed mid-creation (its POST in flight) and replaced creates the payout once', async () => {
    stack = await startStack({ payoutProcessingMs: 200 });
    const before = (await stack.control('GET', '/wallet')).availableBalance;
    await stack.stopWorkers();
    const worker = spawnWorker(stack);
    // The provider takes 4 s over each call: the worker dies while its POST /payouts is in flight, which the provider still applies.
    await stack.control('PUT', '/config', { faults: { latencyMs: 4000 } });
    const handle = await stack.client.workflow.start('sendPayout', { taskQueue: stack.taskQueue, workflowId: uniqueId('send-payout-killed'), args: [request()] });
    await waitUntil(async () => (await payoutRequests()) > 0, 120_000, 'the payout creation in flight');
    await worker.kill();
    await stack.control('PUT', '/config', { faults: { latencyMs: 0 } });
    await stack.startWorkers();

    const payout = await handle.result();
    expect(payout.status).toBe('COMPLETED');
    // The retry found the payout by its merOrderNo and did not POST again.
    expect(await payoutRequests()).toBe(1);
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.violations).toEqual([]);
    expect(ledger.totals.charged).toBe(payout.settleAmount);
    expect((await stack.control('GET', '/wallet')).availableBalance).toBe(before - payout.settleAmount!);
  }, 240_000);

  test('input that breaks the rules fails ValidationFailed naming each field, before any provider call', async () => {
    stack = await startStack();
    const failure = await workflowFailure(send({ ...request(), arriveAmount: 12.5, arriveCurrency: 'euro', idempotencyKey: 'bad key!' }));
    expect(failure.type).toBe('ValidationFailed');
    expect(Object.keys((failure.details![0] as { errors: Record<string, string> }).errors).sort()).toEqual(['arriveAmount', 'arriveCurrency', 'idempotencyKey']);
    expect(await payoutRequests()).toBe(0);
  });

  test('an extra field outside the allowed names fails ValidationFailed naming it and the rule, before any provider call (issue 50)', async () => {
    stack = await startStack();
    const failure = await workflowFailure(send(request({ extra: { payeeBankCode: 'DEUTDEFF', notifyUrl: 'https://x.example/hook' } })));
    expect(failure.type).toBe('ValidationFailed');
    expect((failure.details![0] as { errors: Record<string, string> }).errors).toEqual({ 'extra.notifyUrl': 'is not a field extra may carry (only payeeBankCode, purpose)' });
    expect(await payoutRequests()).toBe(0);
  });
});
