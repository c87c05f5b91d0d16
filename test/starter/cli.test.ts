/**
 * The operator CLI as a child process against a whole stack (sandbox, bridge, workers on a task
 * queue of the test's own), and the typed client's sensitive read.
 */
import { CardIssuingClient, CardIssuingError } from '../../src/client';
import { exitCodeOf } from '../../src/starter/run';
import { jsonOf, runChild as runCli, runInProcess } from './cli-helpers';
import { historyTexts } from '../helpers/history';
import { startStack, type Stack } from '../helpers/stack';
import { entityQueue } from '../../src/shared/task-queues';

const ADA = ['--first', 'Ada', '--last', 'Byron'];

describe('the operator CLI', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
  });
  afterAll(async () => stack?.close());

  test('bad input exits 2 with one line naming the flag, and starts nothing', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['no-such-command'], /unknown command "no-such-command"/],
      [['issue-card', '--bin', 'bin_visa_basic', '--amount', '1000', ...ADA, '--colour', 'red'], /unknown flag --colour/],
      [['issue-card', '--amount', '1000', ...ADA], /--bin is required/],
      [['issue-card', '--bin', 'bin_visa_basic', '--amount', '10.50', ...ADA], /--amount must be a whole number of cents/],
      [['issue-card', '--bin', 'bin_visa_basic', '--amount', '50', ...ADA], /--amount must be an integer between 100 and 4000000/],
      [['issue-card', '--bin', 'bin_visa_basic', '--amount', '1000', '--first', 'Ada'], /--last is required/],
      // The BIN's own rules, before any workflow: a US BIN needs a billing address.
      [['issue-card', '--bin', 'bin_visa_us', '--amount', '1000', ...ADA], /--billing is required for a US cardBinId/],
      [['issue-card', '--bin', 'bin_nope', '--amount', '1000', ...ADA], /--bin bin_nope is not a BIN available/],
      [['fund', '--card', 'crd_abc', '--amount', 'lots'], /--amount must be a whole number of cents/],
      [['withdraw', '--amount', '100'], /--card is required/],
      [['card'], /ID is required/],
      [['esim-buy', '--plan', 'gold'], /--plan must be an epln_ plan id/],
      [['payout-send', '--mer-order-no', 'po-1', '--payment-type', 'SWIFT', '--currency', 'euro', '--amount', '100', '--first', 'A', '--last', 'B', '--account', 'X1'], /--currency must be a currency code/],
      [['payout-send', '--mer-order-no', 'po-1', '--payment-type', 'SWIFT', '--currency', 'EUR', '--amount', '1.5', '--first', 'A', '--last', 'B', '--account', 'X1'], /--amount must be a whole number/],
      [['payout-send', '--payment-type', 'SWIFT', '--currency', 'EUR', '--amount', '100', '--first', 'A', '--last', 'B', '--account', 'X1'], /--mer-order-no is required/],
      [['esim-usage', '--esim', 'sim-1'], /--esim must be an esim_ id/],
    ];
    // Through the runner in this process (the child process is the other tests'): the same parsing, exit codes and output.
    for (const [args, message] of cases) {
      const run = await runInProcess(stack, args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe('');
    }
    // Only the BIN checks' reads through a worker (cardBins read flows) ran: no flow that acts was started.
    const started = await stack.client.workflow.count(`(TaskQueue = '${stack.taskQueue}' OR TaskQueue = '${entityQueue(stack.taskQueue)}') AND WorkflowType != 'cardBins'`);
    expect(started.count).toBe(0);
    expect((await stack.control('GET', '/ledger')).cards).toHaveLength(0);
  });

  test('under --json every failure prints one object: bad input (exit 2) and an unknown flow (exit 2) say their error', async () => {
    const bad = await runInProcess(stack, ['fund', '--card', 'crd_abc', '--amount', 'lots', '--json']);
    expect(bad.code).toBe(2);
    expect(jsonOf(bad)).toEqual({ ok: false, command: 'fund', error: { type: 'UsageError', message: expect.stringContaining('--amount'), details: [] } });
    const unknown = await runInProcess(stack, ['status', 'issue-card/no-such-flow', '--json']);
    expect(unknown.code).toBe(2);
    expect(jsonOf(unknown)).toMatchObject({ ok: false, error: { type: 'FlowNotFound', workflowId: 'issue-card/no-such-flow' } });
  });

  test('exit codes by failure type (CONTRACTS §6): 4 for an outcome no one learned, 3 for the unreachable, 1 for the rest', () => {
    const code = (type: string) => exitCodeOf(new CardIssuingError({ type, message: type }));
    expect(['OutcomeUnknown', 'SubmissionOutcomeUnknown'].map(code)).toEqual([4, 4]);
    expect(['NetworkError', 'Timeout', 'ServerError', 'InvalidSignature', 'IpNotWhitelisted', 'ClientTimeout'].map(code)).toEqual([3, 3, 3, 3, 3, 3]);
    expect(['InsufficientFunds', 'IdempotencyConflict', 'FlowCancelled', 'FlowTerminated', 'FlowTimedOut', 'IdempotencyInProgress'].map(code)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  test('issue-card waits for ENABLE and prints one JSON object; card shows the masked PAN only', async () => {
    const issued = await runCli(stack, ['issue-card', '--bin', 'bin_visa_basic', '--amount', '1000', ...ADA, '--json']);
    expect(issued.code).toBe(0);
    const out = jsonOf(issued);
    expect(out).toMatchObject({ ok: true, command: 'issue-card', result: { status: 'ENABLE', availableBalance: 1000 } });
    expect(out.workflowId).toMatch(/^issue-card\//);
    expect(issued.stderr).toContain(`started ${out.workflowId}`);

    const cardId = out.result.cardId as string;
    const shown = await runCli(stack, ['card', cardId, '--json']);
    expect(shown.code).toBe(0);
    const card = jsonOf(shown).result;
    expect(card).toMatchObject({ cardId, status: 'ENABLE' });
    expect(card.card.cardNumber).toMatch(/^\d{6}\*{6}\d{4}$/);

    const client = new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing });
    const { cardNumber, cvv } = await client.revealSensitive(cardId);
    expect(shown.stdout + shown.stderr).not.toContain(cardNumber);
    expect(shown.stdout).not.toMatch(new RegExp(`"cvv"\\s*:\\s*"${cvv}"`));
  });

  test('a card the provider fails to provision exits 1 with the workflow failure', async () => {
    const run = await runCli(stack, ['issue-card', '--bin', 'bin_visa_basic', '--amount', '1000', '--first', 'FAIL', '--last', 'Byron', '--json']);
    expect(run.code).toBe(1);
    expect(jsonOf(run)).toMatchObject({ ok: false, command: 'issue-card', error: { type: 'CardProvisioningFailed', message: expect.any(String), details: expect.any(Array), workflowId: expect.stringMatching(/^issue-card\//) } });
    expect(run.stderr).toMatch(/failed: CardProvisioningFailed/);
  });

  test('fund, freeze and status run through the flows and the card workflow', async () => {
    const issued = jsonOf(await runCli(stack, ['issue-card', '--bin', 'bin_visa_basic', '--amount', '1000', ...ADA, '--json']));
    const cardId = issued.result.cardId as string;
    const funded = await runCli(stack, ['fund', '--card', cardId, '--amount', '500', '--key', `cli-test-${cardId}`, '--json']);
    expect(funded.code).toBe(0);
    expect(jsonOf(funded)).toMatchObject({ ok: true, workflowId: `card/${cardId}`, result: { status: 'COMPLETED', amount: 500, idempotencyKey: `cli-test-${cardId}`, updateId: `fund-key-cli-test-${cardId}/500` } });

    const frozen = await runCli(stack, ['freeze', cardId, '--json']);
    expect(jsonOf(frozen)).toMatchObject({ ok: true, result: { cardId, status: 'DISABLE' } });

    const status = await runCli(stack, ['status', issued.workflowId, '--json']);
    expect(status.code).toBe(0);
    expect(jsonOf(status).result).toMatchObject({ type: 'issueCard', status: 'COMPLETED', searchAttributes: { CardId: cardId, FlowKind: 'issueCard' } });

    const unknown = await runCli(stack, ['status', 'issue-card/no-such-flow']);
    expect(unknown.code).toBe(2);
  });

  test('payout-send creates the payout through sendPayout; wallet and esim-plans read through workflows', async () => {
    const before = jsonOf(await runCli(stack, ['wallet', '--json'])).result.availableBalance as number;
    const sent = await runCli(stack, [
      'payout-send', '--mer-order-no', 'cli-po-1', '--payment-type', 'BANK_TRANSFER', '--currency', 'EUR', '--amount', '5000',
      '--first', 'Ada', '--last', 'Lovelace', '--account', 'GB29NWBK60161331926819', '--json',
    ]);
    expect(sent.code).toBe(0);
    const payout = jsonOf(sent);
    expect(payout).toMatchObject({ ok: true, workflowId: 'send-payout/cli-po-1', result: { merOrderNo: 'cli-po-1', status: 'COMPLETED' } });
    const after = jsonOf(await runCli(stack, ['wallet', '--json'])).result.availableBalance as number;
    expect(before - after).toBe(payout.result.settleAmount);
    const plans = jsonOf(await runCli(stack, ['esim-plans', '--json']));
    expect(plans.result.plans).toEqual(expect.arrayContaining([expect.objectContaining({ planNo: 'epln_global_1gb' })]));
  });
});

describe('the typed client', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  test('revealSensitive returns the unsealed PAN, which is in no history', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const client = new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing });
    const issuing = await client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'Ada', lastName: 'Byron', idempotencyKey: `reveal-${Date.now()}` });
    const card = await issuing.result();
    const sensitive = await client.revealSensitive(card.cardId);
    expect(sensitive.cardNumber).toMatch(/^\d{16}$/);
    expect(sensitive.cardNumber.slice(-4)).toBe(card.cardNumber.slice(-4));
    for (const workflowId of [`card/${card.cardId}`, issuing.workflowId]) {
      const { stored, decoded } = await historyTexts(await stack.client.workflow.getHandle(workflowId).fetchHistory(), stack.config.codec);
      expect(decoded.length).toBeGreaterThan(100);
      expect(stored).not.toContain(sensitive.cardNumber);
      expect(decoded).not.toContain(sensitive.cardNumber);
    }
  });

  test('failures surface as CardIssuingError, with the field errors and the ids to look at', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const client = new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing });
    const idempotencyKey = `us-no-billing-${Date.now()}`;
    const err = await client.issueCard({ cardBinId: 'bin_visa_us', initialAmount: 1000, firstName: 'Ada', lastName: 'Byron', idempotencyKey }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CardIssuingError);
    expect(err).toMatchObject({ name: 'CardIssuingError', type: 'ValidationFailed', workflowId: `issue-card/${idempotencyKey}`, idempotencyKey, mayHaveTakenEffect: false });
    expect((err as CardIssuingError).fieldErrors).toHaveProperty('billingAddress');
    const frozen = await client.freeze('crd_doesNotExist1').catch((e: unknown) => e);
    expect(frozen).toMatchObject({ name: 'CardIssuingError', workflowId: 'card/crd_doesNotExist1' });
  });
});
