/**
 * The CLI as an operator's tool (issue 31), against a whole stack: a card's commands (pin,
 * contact, delete --yes) through its workflow, a card's flows, --no-wait, cancel and terminate with
 * their reasons, the provider's record of a key, and every provider read through a worker (the CLI
 * works with a wrong provider secret).
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProviderClient } from '../../src/provider/client';
import { SAMPLE_PDF, SAMPLE_PNG, sampleKycForm } from '../../src/sandbox/kyc-samples';
import { entityQueue } from '../../src/shared/entity-queues';
import { issueTestCard } from '../helpers/flows';
import { historyTexts, standaloneDigits } from '../helpers/history';
import { fixtureBins } from '../helpers/provider';
import { startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { jsonOf, runChild, runInProcess, type CliRun } from './cli-helpers';

const ADA = ['--first', 'Ada', '--last', 'Byron'];
const PAYEE = ['--payment-type', 'BANK_TRANSFER', '--currency', 'EUR', '--amount', '5000', '--first', 'Ada', '--last', 'Lovelace'];

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ cardProvisioningMs: 50, payoutProcessingMs: 300 });
});
afterAll(async () => stack?.close());

const cli = (...args: string[]) => runInProcess(stack, args);

async function flowCount(): Promise<number> {
  return (await stack.client.workflow.count(`TaskQueue = '${stack.taskQueue}' OR TaskQueue = '${entityQueue(stack.taskQueue)}'`)).count;
}

async function providerCard(cardId: string) {
  const provider = createProviderClient(stack.config.provider);
  try {
    return await provider.getCard(cardId);
  } finally {
    await provider.close();
  }
}

async function providerPayout(merOrderNo: string) {
  const provider = createProviderClient(stack.config.provider);
  try {
    return await provider.getPayout(merOrderNo);
  } finally {
    await provider.close();
  }
}

function expectUsage(run: CliRun, message: RegExp): void {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(message) });
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
}

describe('bad input exits 2 and starts nothing', () => {
  test('delete without --yes, a stop without --reason, a bad key, an empty contact, a bad PIN, --no-wait on a read', async () => {
    const card = await issueTestCard(stack, 1000);
    await waitUntil(async () => (await flowCount()) >= 2, 10_000, 'the card flows are visible');
    const before = await flowCount();
    const cases: Array<[string[], RegExp]> = [
      [['delete', card.cardId], /for good .*repeat with --yes/],
      [['cancel', 'issue-card/x'], /--reason is required/],
      [['terminate', 'issue-card/x', '--reason', ' '], /--reason must be 1-300 characters/],
      [['cancel', '--reason', 'why'], /WORKFLOW_ID is required/],
      [['operation', 'not a key!'], /KEY must be 1-64 characters/],
      [['operation'], /KEY is required/],
      [['contact', card.cardId], /at least one of --email, --mobile-prefix, --mobile/],
      [['contact', card.cardId, '--mobile-prefix', '44'], /--mobile-prefix /],
      [['flows'], /--card is required/],
      [['card', card.cardId, '--no-wait'], /unknown flag --no-wait/],
      [['pin', card.cardId, '--pin', '1234'], /unknown flag --pin/],
    ];
    for (const [args, message] of cases) {
      const run = await cli(...args);
      expectUsage(run, message);
      expect(run.stdout).toBe('');
    }
    // A PIN the rules refuse (one digit repeated), and one for a card whose BIN takes none: refused before the card is asked.
    const repeated = await runInProcess(stack, ['pin', card.cardId, '--json'], { readSecret: async () => '7777' });
    expect(repeated.code).toBe(2);
    expect(jsonOf(repeated)).toEqual({ ok: false, command: 'pin', error: { type: 'UsageError', message: expect.stringMatching(/^the PIN /), details: [] } });
    expect(repeated.stdout + repeated.stderr).not.toContain('7777');
    const noPin = await runInProcess(stack, ['pin', card.cardId], { readSecret: async () => '4826' });
    expectUsage(noPin, /cannot take a PIN: its BIN \S+ has supportPin false/);

    const state = jsonOf(await cli('card', card.cardId, '--json')).result;
    expect(state).toMatchObject({ status: 'ENABLE', operationsApplied: 0 });
    expect(await flowCount()).toBe(before);
  });
});

describe('a card through its workflow', () => {
  test('issue-card takes its PIN from stdin (--pin-stdin), never as a flag value: --pin NNNN is refused naming the rule, nothing started', async () => {
    const { pin: pinBin } = await fixtureBins(stack);
    const before = await flowCount();
    const refused = await runChild(stack, ['issue-card', '--bin', pinBin.cardBinId, '--amount', '1000', ...ADA, '--pin', '4826']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--pin takes no value: a PIN is never a flag/);
    expect(await flowCount()).toBe(before);
    const issued = await runChild(stack, ['issue-card', '--bin', pinBin.cardBinId, '--amount', '1000', ...ADA, '--pin-stdin', '--json'], { stdin: '4826\n' });
    expect(issued.code).toBe(0);
    expect(jsonOf(issued)).toMatchObject({ ok: true, result: { status: 'ENABLE', supportPin: true } });
    expect(issued.stdout + issued.stderr).not.toMatch(/4826/);
  });

  test("card --json shows the card's allowlisted fields: no contact data from CARD_CREATED (email, mobile, billing address)", async () => {
    const { contact: contactBin } = await fixtureBins(stack);
    const card = await issueTestCard(stack, 1000, { cardBinId: contactBin.cardBinId, email: 'ada@example.com', mobilePrefix: '+44', mobile: '7700900123' });
    await waitUntil(async () => (await runChild(stack, ['card', card.cardId, '--json'])).code === 0, 30_000, 'the card readable');
    const shown = await runChild(stack, ['card', card.cardId, '--json']);
    expect(jsonOf(shown)).toMatchObject({ ok: true, result: { cardId: card.cardId, status: 'ENABLE' } });
    expect(shown.stdout).not.toMatch(/ada@example\.com|7700900123|billingAddress|"email"|"mobile"/);
  });

  test('pin: read from stdin, sealed to the workers\' key, set through the card workflow, printed nowhere and in no history even decoded', async () => {
    const { pin: pinBin } = await fixtureBins(stack);
    const card = await issueTestCard(stack, 1000, { cardBinId: pinBin.cardBinId });
    const set = await runChild(stack, ['pin', card.cardId, '--json'], { stdin: '4826\n' });
    expect(set.code).toBe(0);
    expect(jsonOf(set)).toMatchObject({ ok: true, command: 'pin', workflowId: `card/${card.cardId}`, result: { cardId: card.cardId, status: 'ENABLE' } });
    expect(set.stdout + set.stderr).not.toMatch(/4826/);
    expect(await stack.control('POST', `/cards/${card.cardId}/pin-check`, { pin: '4826' })).toMatchObject({ matches: true });
    const { stored, decoded } = await historyTexts(await stack.client.workflow.getHandle(`card/${card.cardId}`).fetchHistory(), stack.config.codec);
    // The update's argument and the activity's input hold the PIN sealed to the workers' key: decoded with the payload key, still no PIN.
    expect(decoded).toMatch(/"pin"\s*:\s*\{"keyId":"test","enc":/);
    for (const text of [stored, decoded]) expect(text).not.toMatch(standaloneDigits('4826'));
  });

  test('contact changes the email through the card workflow; delete --yes closes the card', async () => {
    const card = await issueTestCard(stack, 1000);
    const changed = await cli('contact', card.cardId, '--email', 'ada@example.org', '--json');
    expect(changed.code).toBe(0);
    expect(jsonOf(changed)).toMatchObject({ ok: true, workflowId: `card/${card.cardId}`, result: { cardId: card.cardId, changed: ['email'] } });
    expect(changed.stdout).not.toContain('ada@example.org');
    expect((await providerCard(card.cardId)).email).toBe('ada@example.org');

    const deleted = await cli('delete', card.cardId, '--yes', '--json');
    expect(deleted.code).toBe(0);
    expect(jsonOf(deleted).result.status).toMatch(/^DELET(ING|ED)$/);
  });
});

describe('a card\'s flows and --no-wait', () => {
  test('issue-card and fund --no-wait print the workflow ID and exit 0; fund again under the key joins; flows lists them by CardId, --open the running', async () => {
    const started = await cli('issue-card', '--bin', 'bin_visa_basic', '--amount', '1000', ...ADA, '--no-wait');
    expect(started.code).toBe(0);
    const workflowId = started.stdout.trim();
    expect(workflowId).toMatch(/^issue-card\/cli-/);
    expect(started.stderr).toContain('not waiting (--no-wait)');
    const card = await stack.client.workflow.getHandle(workflowId).result();
    expect(card.status).toBe('ENABLE');

    const key = `no-wait-${card.cardId}`;
    const submitted = await cli('fund', '--card', card.cardId, '--amount', '700', '--key', key, '--no-wait', '--json');
    expect(submitted.code).toBe(0);
    expect(jsonOf(submitted)).toMatchObject({ ok: true, workflowId: `card/${card.cardId}`, result: { workflowId: `card/${card.cardId}`, updateId: `fund-key-${key}/700`, idempotencyKey: key, waited: false } });
    const joined = await cli('fund', '--card', card.cardId, '--amount', '700', '--key', key, '--json');
    expect(jsonOf(joined)).toMatchObject({ ok: true, result: { status: 'COMPLETED', updateId: `fund-key-${key}/700` } });
    await waitUntil(async () => (await providerCard(card.cardId)).availableBalance === 1700, 10_000, 'funded once');
    // Another amount under the key is refused by the card before it is accepted, --no-wait or not.
    const conflict = await cli('fund', '--card', card.cardId, '--amount', '800', '--key', key, '--no-wait', '--json');
    expect(conflict.code).toBe(1);
    expect(jsonOf(conflict)).toMatchObject({ ok: false, error: { type: 'IdempotencyConflict', workflowId: `card/${card.cardId}` } });
    expect((await providerCard(card.cardId)).availableBalance).toBe(1700);

    const all = async () => jsonOf(await cli('flows', '--card', card.cardId, '--json')).result.flows as Array<{ workflowId: string; type: string; status: string }>;
    await waitUntil(async () => (await all()).length === 2, 15_000, 'both flows are visible');
    expect((await all()).map((f) => [f.workflowId, f.type, f.status]).sort()).toEqual([
      [`card/${card.cardId}`, 'cardLifecycle', 'RUNNING'],
      [workflowId, 'issueCard', 'COMPLETED'],
    ]);
    const open = jsonOf(await cli('flows', '--card', card.cardId, '--open', '--json')).result;
    expect(open.flows).toEqual([expect.objectContaining({ workflowId: `card/${card.cardId}`, status: 'RUNNING', startTime: expect.any(String) })]);
    const text = await cli('flows', '--card', card.cardId);
    expect(text.stdout).toMatch(/workflowId\s+type\s+status\s+startTime\s+closeTime/);
    expect(text.stdout).toContain(workflowId);
    expect((await cli('flows', '--card', 'crd_nobody')).stdout).toMatch(/no flows of card crd_nobody/);
  });

  test('esim-buy and reconcile --no-wait print what they started and exit 0', async () => {
    const bought = await cli('esim-buy', '--plan', 'epln_global_1gb', '--no-wait', '--json');
    expect(bought.code).toBe(0);
    const purchase = jsonOf(bought);
    expect(purchase).toMatchObject({ ok: true, workflowId: expect.stringMatching(/^purchase-esim\/cli-/), result: { waited: false } });
    expect((await stack.client.workflow.getHandle(purchase.workflowId).result()).status).toBe('ISSUED');

    const reconciling = await cli('reconcile', '--only', 'bins', '--no-wait');
    expect(reconciling.code).toBe(0);
    const [started] = reconciling.stdout.trim().split('\n');
    expect(started).toMatch(/^refresh-bins\/manual\//);
    expect(await stack.client.workflow.getHandle(started).result()).toMatchObject({ kind: 'bins' });
  });
});

describe('kyc', () => {
  test("copies the operator's files into the onboarding's folder of the workers' documents store, by names of their content, and the flow uploads them from there", async () => {
    const outside = mkdtempSync(join(tmpdir(), 'operator-kyc-'));
    try {
      const formFile = join(outside, 'form.json');
      const { documents: _documents, ...form } = sampleKycForm({} as never);
      writeFileSync(formFile, JSON.stringify(form));
      writeFileSync(join(outside, 'passport.png'), SAMPLE_PNG);
      writeFileSync(join(outside, 'report.pdf'), SAMPLE_PDF);
      const key = uniqueId('cli-kyc').slice(0, 40);
      const run = await cli('kyc', '--form', formFile, '--id-front', join(outside, 'passport.png'), '--attachment', join(outside, 'report.pdf'), '--key', key, '--json');
      expect(run.code).toBe(0);
      const { result } = jsonOf(run);
      expect(result).toMatchObject({ kycStatus: 'APPROVED' });
      // The folder of the onboarding the key starts (its workflow ID): only that onboarding may read them.
      const stored = readdirSync(join(stack.config.documentsDir, 'onboard-cardholder', key));
      expect(stored).toEqual(expect.arrayContaining([expect.stringMatching(/^[0-9a-f]{40}\.png$/), expect.stringMatching(/^[0-9a-f]{40}\.pdf$/)]));
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test('a file of another type than its name says fails exit 2 naming the flag, and nothing is started', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'operator-kyc-'));
    try {
      writeFileSync(join(outside, 'form.json'), '{}');
      writeFileSync(join(outside, 'notes.txt'), 'x');
      const before = await flowCount();
      expectUsage(await cli('kyc', '--form', join(outside, 'form.json'), '--id-front', join(outside, 'notes.txt'), '--attachment', join(outside, 'notes.txt')), /--id-front .*must be a \.png, \.jpg, \.jpeg or \.pdf file/);
      expect(await flowCount()).toBe(before);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('personal data off the command line', () => {
  test('payout-send reads the account from stdin (-) and the payee from a file (@FILE): none of it in argv, the payout created with it', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'operator-payee-'));
    try {
      writeFileSync(join(outside, 'last-name'), 'Lovelace\n');
      const merOrderNo = uniqueId('po-stdin').slice(0, 32);
      const args = ['payout-send', '--mer-order-no', merOrderNo, '--payment-type', 'BANK_TRANSFER', '--currency', 'EUR', '--amount', '5000', '--first', 'Ada', '--last', `@${join(outside, 'last-name')}`, '--account', '-', '--no-wait', '--json'];
      const sent = await runChild(stack, args, { stdin: 'GB29NWBK60161331926819\n' });
      expect(sent.code).toBe(0);
      await waitUntil(async () => (await providerPayout(merOrderNo).catch(() => undefined)) !== undefined, 30_000, 'the payout created');
      expect(await providerPayout(merOrderNo)).toMatchObject({ payeeLastName: 'Lovelace', payeeAccountNo: expect.stringMatching(/6819$/) });
      // Read from stdin, never echoed: the account number is nowhere in what the CLI printed.
      expect(sent.stdout + sent.stderr).not.toContain('GB29NWBK60161331926819');
      // Two flags cannot both read stdin: refused naming them, nothing started.
      const both = await runChild(stack, ['payout-send', '--mer-order-no', `${merOrderNo}x`, '--payment-type', 'BANK_TRANSFER', '--currency', 'EUR', '--amount', '5000', '--first', '-', '--last', 'L', '--account', '-']);
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/only one flag may read stdin/);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('stopping a flow', () => {
  afterAll(async () => stack.control('PUT', '/config', { payoutProcessingMs: 300 }));

  test('cancel and terminate record their reason (status shows it); the command following the flow exits 1; a closed flow or a card workflow is refused', async () => {
    // Payouts stay PENDING: their flows wait.
    await stack.control('PUT', '/config', { payoutProcessingMs: 600_000 });
    const no = uniqueId('po-stop');
    const sent = await cli('payout-send', '--mer-order-no', no, ...PAYEE, '--account', 'GB29NWBK60161331926819', '--no-wait', '--json');
    expect(jsonOf(sent)).toMatchObject({ ok: true, workflowId: `send-payout/${no}`, result: { workflowId: `send-payout/${no}`, waited: false } });
    // --no-wait answered once the flow started, not once it created the payout: the tracker reads the payout first.
    await waitUntil(async () => (await providerPayout(no)).status === 'PENDING', 15_000, 'the payout was created');

    const tracking = cli('payout', '--mer-order-no', no, '--json');
    const tracker = stack.client.workflow.getHandle(`track-payout/${no}`);
    await waitUntil(async () => (await tracker.describe()).status.name === 'RUNNING', 15_000, 'the tracker runs');
    const cancelled = await cli('cancel', `track-payout/${no}`, '--reason', 'OPS-31: wrong payee', '--json');
    expect(cancelled.code).toBe(0);
    expect(jsonOf(cancelled)).toMatchObject({ ok: true, result: { workflowId: `track-payout/${no}`, type: 'trackPayout', action: 'cancel', reason: 'OPS-31: wrong payee' } });
    const followed = await tracking;
    expect(followed.code).toBe(1);
    expect(jsonOf(followed)).toMatchObject({ ok: false, command: 'payout', error: { type: 'FlowCancelled', message: expect.any(String), details: [], workflowId: `track-payout/${no}` } });
    const cancelStatus = jsonOf(await cli('status', `track-payout/${no}`, '--json')).result;
    expect(cancelStatus).toMatchObject({ status: 'CANCELLED', stopped: { action: 'cancel', reason: 'OPS-31: wrong payee', identity: expect.any(String), at: expect.any(String) } });

    // The same payout-send again joins the running flow; terminating it ends that wait with exit 1.
    let followed$: (id: string) => void = () => undefined;
    const following = new Promise<string>((resolve) => (followed$ = resolve));
    const joining = runInProcess(stack, ['payout-send', '--mer-order-no', no, ...PAYEE, '--account', 'GB29NWBK60161331926819', '--json'], { following: (id) => followed$(id) });
    expect(await following).toBe(`send-payout/${no}`);
    const terminated = await cli('terminate', `send-payout/${no}`, '--reason', 'OPS-31: stuck at the bank');
    expect(terminated.code).toBe(0);
    expect(terminated.stdout).toMatch(/status: TERMINATED/);
    const joined = await joining;
    expect(joined.code).toBe(1);
    expect(jsonOf(joined).error).toMatchObject({ type: 'FlowTerminated', workflowId: `send-payout/${no}` });
    const terminateStatus = jsonOf(await cli('status', `send-payout/${no}`, '--json')).result;
    expect(terminateStatus).toMatchObject({ status: 'TERMINATED', stopped: { action: 'terminate', reason: 'OPS-31: stuck at the bank' } });

    expectUsage(await cli('cancel', `send-payout/${no}`, '--reason', 'again'), /is not running \(TERMINATED\)/);
    const unknown = await cli('terminate', 'send-payout/no-such-flow', '--reason', 'x', '--json');
    expect(unknown.code).toBe(2);
    expect(jsonOf(unknown)).toMatchObject({ ok: false, error: { type: 'FlowNotFound', workflowId: 'send-payout/no-such-flow' } });
    const card = await issueTestCard(stack, 1000);
    expectUsage(await cli('terminate', `card/${card.cardId}`, '--reason', 'x'), /long-lived workflow .*--force/);
    expect((await stack.client.workflow.getHandle(`card/${card.cardId}`).describe()).status.name).toBe('RUNNING');
  });

  test('a flow that timed out ends the command following it with exit 1', async () => {
    await stack.control('PUT', '/config', { payoutProcessingMs: 600_000 });
    const no = uniqueId('po-timeout');
    expect((await cli('payout-send', '--mer-order-no', no, ...PAYEE, '--account', 'GB29NWBK60161331926819', '--no-wait')).code).toBe(0);
    await waitUntil(async () => (await providerPayout(no)).status === 'PENDING', 15_000, 'the payout was created');
    // A tracker started with a short execution timeout (as another service might): the CLI joins it.
    await stack.client.workflow.start('trackPayout', { taskQueue: stack.taskQueue, workflowId: `track-payout/${no}`, args: [{ merOrderNo: no }], workflowExecutionTimeout: '3s' });
    const run = await cli('payout', '--mer-order-no', no, '--json');
    expect(run.code).toBe(1);
    expect(jsonOf(run)).toMatchObject({ ok: false, error: { type: 'FlowTimedOut', workflowId: `track-payout/${no}` } });
    await stack.client.workflow.getHandle(`send-payout/${no}`).terminate('test: done');
  });

  test('a payout that ends FAILED is the flow\'s result and a business failure: exit 1, the result and the error', async () => {
    await stack.control('PUT', '/config', { payoutProcessingMs: 300 });
    const no = uniqueId('po-fail');
    const run = await cli('payout-send', '--mer-order-no', no, ...PAYEE, '--account', 'FAIL-0001', '--json');
    expect(run.code).toBe(1);
    expect(jsonOf(run)).toMatchObject({
      ok: false,
      workflowId: `send-payout/${no}`,
      result: { merOrderNo: no, status: 'FAILED' },
      error: { type: 'PayoutNotCompleted', message: expect.stringContaining('FAILED'), details: [{ merOrderNo: no, status: 'FAILED' }], workflowId: `send-payout/${no}` },
    });
  });
});

describe('provider reads through a worker', () => {
  test('bins, issue-card\'s BIN check and operation work with a wrong provider secret and no way to the provider', async () => {
    const statsBefore = await stack.control('GET', '/stats');
    // An operator's machine, not a developer's: a real provider secret there refuses CARD_ISSUING_DEVELOPMENT (issue 50).
    const env = { CARD_ISSUING_DEVELOPMENT: undefined, PROVIDER_API_SECRET: 'secret_wrong', PROVIDER_BASE_URL: 'http://127.0.0.1:9' };
    const bins = await runChild(stack, ['bins', '--json'], { env });
    expect(bins.code).toBe(0);
    expect(jsonOf(bins).result.bins).toEqual(expect.arrayContaining([expect.objectContaining({ cardBinId: 'bin_visa_basic' }), expect.objectContaining({ cardBinId: 'bin_visa_us' })]));
    const usNoBilling = await runChild(stack, ['issue-card', '--bin', 'bin_visa_us', '--amount', '1000', ...ADA], { env });
    expectUsage(usNoBilling, /--billing is required for a US cardBinId/);
    const issued = await runChild(stack, ['issue-card', '--bin', 'bin_visa_basic', '--amount', '1000', ...ADA, '--key', uniqueId('wrong-secret'), '--json'], { env });
    expect(issued.code).toBe(0);
    expect(jsonOf(issued).result.status).toBe('ENABLE');

    const key = uniqueId('op');
    expect(jsonOf(await cli('fund', '--card', jsonOf(issued).result.cardId, '--amount', '300', '--key', key, '--json')).ok).toBe(true);
    const known = await runChild(stack, ['operation', key, '--json'], { env });
    expect(known.code).toBe(0);
    expect(jsonOf(known)).toMatchObject({ ok: true, command: 'operation', result: { idempotencyKey: key, known: true, record: { status: 'COMPLETED', operationId: expect.stringMatching(/^oaop_/) } } });
    const unknownKey = await cli('operation', 'never-used-key', '--json');
    expect(unknownKey.code).toBe(0);
    expect(jsonOf(unknownKey).result).toEqual({ idempotencyKey: 'never-used-key', known: false });
    expect((await cli('operation', 'never-used-key')).stdout).toMatch(/no record of key never-used-key/);

    // Nothing reached the provider with the CLI's wrong secret: every call was the workers', and signed right.
    const statsAfter = await stack.control('GET', '/stats');
    const refused = (stats: any) => Object.values(stats.endpoints as Record<string, { byStatus?: Record<string, number> }>).reduce((n, e) => n + (e.byStatus?.['403'] ?? 0), 0);
    expect(refused(statsAfter)).toBe(refused(statsBefore));
  });
});
