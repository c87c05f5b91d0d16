/**
 * The CLI's exit codes and --json failures (CONTRACTS §6) for what only a live stack can make:
 * 3 when Temporal cannot be reached or the provider refuses the workers, 4 for an OutcomeUnknown
 * (its details carrying the key, stderr naming `settle` and `operation KEY`). Bad input (2), a
 * business failure, a cancelled, terminated or timed-out flow (1) and an unknown flow (2):
 * cli.test.ts and operator.test.ts.
 */
import { issueTestCard } from '../helpers/flows';
import { startStack, uniqueId, type Stack } from '../helpers/stack';
import { faults } from '../money-edges/helpers';
import { jsonOf, runChild, runInProcess } from './cli-helpers';

let stack: Stack;
beforeAll(async () => {
  // The workers' provider client gives up after 1 s; a hung call is held 5 s.
  stack = await startStack({ cardProvisioningMs: 50, faults: { hangMs: 5000 } }, { PROVIDER_TIMEOUT_MS: '1000' });
});
afterAll(async () => stack?.close());

test('3: Temporal cannot be reached; every failure under --json is one object { ok: false, error }', async () => {
  const config = { ...stack.config, temporal: { ...stack.config.temporal, address: '127.0.0.1:1' } };
  const run = await runInProcess(stack, ['status', 'issue-card/anything', '--json'], { config });
  expect(run.code).toBe(3);
  expect(jsonOf(run)).toEqual({ ok: false, command: 'status', error: { type: 'Unavailable', message: expect.stringMatching(/^could not complete: /), details: [] } });
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
});

test('2: a bad variable is bad input: one line naming it, and under --json the one object; nothing is started', async () => {
  const run = await runChild(stack, ['status', 'issue-card/anything', '--json'], { env: { LOG_LEVEL: 'loud' } });
  expect(run.code).toBe(2);
  expect(jsonOf(run)).toEqual({ ok: false, command: 'status', error: { type: 'ConfigError', message: expect.stringContaining('LOG_LEVEL'), details: [] } });
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
});

test('3: the provider refuses the workers (IpNotWhitelisted): the read fails with its type', async () => {
  await stack.control('PUT', '/config', { whitelist: ['192.0.2.1'] });
  try {
    const run = await runInProcess(stack, ['wallet', '--json']);
    expect(run.code).toBe(3);
    expect(jsonOf(run)).toMatchObject({ ok: false, command: 'wallet', error: { type: 'IpNotWhitelisted', message: expect.any(String), details: expect.any(Array), workflowId: expect.stringMatching(/^wallet-balance\//) } });
  } finally {
    await stack.control('PUT', '/config', { whitelist: [] });
  }
});

test('4: a funding whose outcome no one could learn: OutcomeUnknown with its key; operation KEY then reads the provider\'s record', async () => {
  const card = await issueTestCard(stack, 1000);
  const key = uniqueId('unknown');
  // The POST hangs after its effect (once); every read of its key is refused: the outcome cannot be learnt.
  await faults(stack, {
    'POST /cards/{cardId}/funding': { hangRate: 1, afterEffect: true, maxFaults: 1 },
    'GET /operations/{idempotencyKey}': { refuseRate: 1, refuseStatus: 403 },
  });
  const run = await runInProcess(stack, ['fund', '--card', card.cardId, '--amount', '2500', '--key', key, '--json']);
  await faults(stack, {});
  expect(run.code).toBe(4);
  const out = jsonOf(run);
  expect(out).toMatchObject({ ok: false, command: 'fund', workflowId: `card/${card.cardId}`, error: { type: 'OutcomeUnknown', message: expect.stringContaining(key), workflowId: `card/${card.cardId}` } });
  expect(out.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ idempotencyKey: key, mayHaveTakenEffect: true })]));
  expect(run.stderr).toMatch(/money may have moved \(update fund-key-\S+ of card\/\S+\): reconcile-money compares its key/);
  expect(run.stderr).toContain(`npm run starter -- operation ${key}`);

  const record = await runInProcess(stack, ['operation', key, '--json']);
  expect(record.code).toBe(0);
  expect(jsonOf(record).result).toMatchObject({ idempotencyKey: key, known: true, record: { status: 'COMPLETED' } });
});
