/**
 * The reconciliation commands of the operator CLI (CONTRACTS §6), run in this process through
 * the CLI's own runner against a whole stack: `schedules apply` is idempotent, `reconcile`
 * exits 0 with no difference and 1 with some, `drift --json` prints the last reports.
 */
import { SandboxControlClient } from '../../src/sandbox/control-client';
import { RECONCILIATIONS } from '../../src/shared/reconciliation';
import { runCli } from '../../src/starter/run';
import { issueTestCard } from '../helpers/flows';
import { startStack, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

jest.setTimeout(180_000);

const SCHEDULE_IDS = ['reconcile-money', 'reconcile-cards', 'refresh-bins', 'sweep-stuck'];

describe('the reconciliation CLI', () => {
  let stack: Stack;
  const cli = async (...args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(args, () => stack.config, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { code, stdout, stderr, json: () => JSON.parse(stdout.trim()) };
  };

  beforeAll(async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
  });
  afterAll(async () => {
    for (const id of SCHEDULE_IDS) await stack?.client.schedule.getHandle(id).delete().catch(() => undefined);
    await stack?.close();
  });

  test('schedules apply creates the four schedules once; applying again changes nothing; pause and resume show in list', async () => {
    const first = await cli('schedules', 'apply', '--json');
    expect(first.code).toBe(0);
    expect(first.json().result.schedules).toEqual(Object.fromEntries(SCHEDULE_IDS.map((id) => [id, 'created'])));
    const again = await cli('schedules', 'apply', '--json');
    expect(again.code).toBe(0);
    expect(again.json().result.schedules).toEqual(Object.fromEntries(SCHEDULE_IDS.map((id) => [id, 'unchanged'])));

    expect((await cli('schedules', 'pause', 'reconcile-money')).code).toBe(0);
    const listed = (await cli('schedules', 'list', '--json')).json().result.schedules as Array<{ name: string; paused: boolean; workflowType: string }>;
    expect(listed.map((s) => [s.name, s.paused])).toEqual(SCHEDULE_IDS.map((id) => [id, id === 'reconcile-money']));
    const described = await stack.client.schedule.getHandle('reconcile-money').describe();
    expect(described.policies.overlap).toBe('SKIP');
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'reconcile-money', taskQueue: stack.taskQueue });
    expect((await cli('schedules', 'resume', 'reconcile-money')).code).toBe(0);
    expect((await stack.client.schedule.getHandle('reconcile-money').describe()).state.paused).toBe(false);
  });

  test('a schedule and a run made before the workflows took the schedules\' names: apply moves the schedule, drift reads the run\'s report', async () => {
    const { workflowType, formerWorkflowType } = RECONCILIATIONS.money;
    const schedule = stack.client.schedule.getHandle('reconcile-money');
    await schedule.update((previous) => ({ ...previous, action: { ...previous.action, workflowType: formerWorkflowType } as typeof previous.action }));
    expect((await schedule.describe()).action).toMatchObject({ workflowType: formerWorkflowType });

    const applied = await cli('schedules', 'apply', '--json');
    expect(applied.json().result.schedules).toEqual(Object.fromEntries(SCHEDULE_IDS.map((id) => [id, id === 'reconcile-money' ? 'updated' : 'unchanged'])));
    expect((await schedule.describe()).action).toMatchObject({ type: 'startWorkflow', workflowType, taskQueue: stack.taskQueue });

    // A run of the former type still runs (the worker registers both names), and its report is the last one.
    const former = await stack.client.workflow.start(formerWorkflowType, { taskQueue: stack.taskQueue, workflowId: `reconcile-money/former/${Date.now()}`, args: [{ since: '1m' }] });
    await former.result();
    const lastMoneyReport = async () => (await cli('drift', '--json')).json().result.reports.find((r: { kind: string }) => r.kind === 'money')?.workflowId;
    await waitUntil(async () => (await lastMoneyReport()) === former.workflowId, 10_000, 'drift shows the former-type run');
  });

  test('bad input exits 2', async () => {
    for (const args of [['schedules', 'pause', 'nope'], ['schedules', 'frobnicate'], ['schedules', 'pause'], ['reconcile', '--only', 'money,gold'], ['reconcile', '--since', 'soon']]) {
      const run = await cli(...args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr).toMatch(/NAME|ACTION|--only|--since/);
    }
  });

  test('reconcile exits 0 with no difference and 1 with some; drift --json prints the last report of each', async () => {
    const card = await issueTestCard(stack, 5_000);
    const clean = await cli('reconcile', '--only', 'money,cards', '--since', '1h', '--json');
    expect(clean.code).toBe(0);
    expect(clean.json().result).toMatchObject({ differences: 0, reports: [{ kind: 'money', differences: [] }, { kind: 'cards', checked: 1, differences: [] }] });

    await new SandboxControlClient(stack.sandboxUrl).silentCardTransaction(card.cardId, 700, 'No webhook');
    const found = await cli('reconcile', '--only', 'cards');
    expect(found.code).toBe(1);
    expect(found.stdout).toMatch(/reconcile-cards: 1 checked, 1 difference\(s\) \(1 card-balance-differs\), 1 corrected/);

    const drift = await cli('drift', '--json');
    expect(drift.code).toBe(0);
    const result = drift.json().result;
    expect(result.neverRun.sort()).toEqual(['refresh-bins', 'sweep-stuck']);
    const cards = result.reports.find((r: { kind: string }) => r.kind === 'cards');
    expect(cards.differences).toEqual([expect.objectContaining({ kind: 'card-balance-differs', ids: { cardId: card.cardId }, ours: 5_000, provider: 4_300 })]);
    expect(cards.workflowId).toMatch(/^reconcile-cards\/manual\//);
    expect(result.reports.find((r: { kind: string }) => r.kind === 'money').differences).toEqual([]);
  });
});
