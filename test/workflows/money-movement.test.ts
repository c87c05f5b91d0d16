import { waitUntil } from '../helpers/wait';
import { spawnWorker } from '../helpers/worker-process';
import { issueTestCard, workflowFailure } from '../helpers/flows';
import { startStack, uniqueId, type Stack } from '../helpers/stack';

const fastPolls = { pollInitialIntervalMs: 200, pollMaxIntervalMs: 1000 };

describe('fundCard and withdrawFromCard', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  const run = (type: 'fundCard' | 'withdrawFromCard', input: Record<string, unknown>, workflowId = uniqueId(type)) =>
    stack.client.workflow.execute(type, { taskQueue: stack.taskQueue, workflowId, args: [{ timings: fastPolls, ...input }] });

  test('funding with 30% of provider calls failing (half after their side effect) completes and charges once', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    await stack.control('PUT', '/config', { faults: { errorRate: 0.3 } });
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await run('fundCard', { cardId: card.cardId, amount: 1000 + i }));
    await stack.control('PUT', '/config', { faults: { errorRate: 0 } });
    expect(results.map((r) => r.status)).toEqual(Array(5).fill('COMPLETED'));
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.violations).toEqual([]);
    const balance = ledger.cards.find((c: { cardId: string }) => c.cardId === card.cardId).availableBalance;
    expect(balance).toBe(1000 + 1000 + 1001 + 1002 + 1003 + 1004);
  });

  test('the same caller key twice returns the first outcome; a different amount gives IdempotencyConflict', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const idempotencyKey = uniqueId('caller-key').slice(0, 60);
    const first = await run('fundCard', { cardId: card.cardId, amount: 2000, idempotencyKey });
    const again = await run('fundCard', { cardId: card.cardId, amount: 2000, idempotencyKey });
    expect(again.operationId).toBe(first.operationId);
    const conflict = await workflowFailure(run('fundCard', { cardId: card.cardId, amount: 2500, idempotencyKey }));
    expect(conflict.type).toBe('IdempotencyConflict');
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.cards.find((c: { cardId: string }) => c.cardId === card.cardId).availableBalance).toBe(3000);
    expect(ledger.violations).toEqual([]);
  });

  test('withdrawal of more than the card holds fails InsufficientFunds, and its key is then terminal', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 500);
    const idempotencyKey = uniqueId('wdr').slice(0, 60);
    const failure = await workflowFailure(run('withdrawFromCard', { cardId: card.cardId, amount: 501, idempotencyKey }));
    expect(failure.type).toBe('InsufficientFunds');
    const terminal = await workflowFailure(run('withdrawFromCard', { cardId: card.cardId, amount: 501, idempotencyKey }));
    expect(terminal.type).toBe('IdempotencyKeyTerminal');
    expect(terminal.message).toMatch(/new key/);
    const ok = await run('withdrawFromCard', { cardId: card.cardId, amount: 500 });
    expect(ok.status).toBe('COMPLETED');
    expect((await stack.control('GET', '/ledger')).violations).toEqual([]);
  });

  test('funding beyond the wallet fails InsufficientFunds; amounts out of bounds fail ValidationFailed before any call', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    const wallet = await stack.control('GET', '/wallet');
    await stack.control('POST', '/wallet', { amount: -wallet.availableBalance + 50 });
    expect((await workflowFailure(run('fundCard', { cardId: card.cardId, amount: 100 }))).type).toBe('InsufficientFunds');
    const invalid = await workflowFailure(run('fundCard', { cardId: card.cardId, amount: 99.5 }));
    expect(invalid.type).toBe('ValidationFailed');
    expect((invalid.details![0] as { errors: Record<string, string> }).errors).toHaveProperty('amount');
  });

  test('a worker killed mid-funding and restarted completes with one charge', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    await stack.stopWorkers();
    // A worker in its own process (no wrapper process), killed with SIGKILL, whole process group, while the funding call is in flight.
    const worker = spawnWorker(stack);
    await stack.control('PUT', '/config', { faults: { latencyMs: 4000 } });
    const handle = await stack.client.workflow.start('fundCard', {
      taskQueue: stack.taskQueue,
      workflowId: uniqueId('fund-killed'),
      args: [{ cardId: card.cardId, amount: 4321, timings: fastPolls }],
    });
    await waitUntil(async () => (await stack.control('GET', '/stats')).endpoints.fundCard?.requests > 0, 60_000, 'the funding call in flight');
    await worker.kill();
    await stack.control('PUT', '/config', { faults: { latencyMs: 0 } });
    await stack.startWorkers();
    const result = await handle.result();
    expect(result.status).toBe('COMPLETED');
    const ledger = await stack.control('GET', '/ledger');
    expect(ledger.violations).toEqual([]);
    expect(ledger.cards.find((c: { cardId: string }) => c.cardId === card.cardId).availableBalance).toBe(1000 + 4321);
  }, 180_000);
});

