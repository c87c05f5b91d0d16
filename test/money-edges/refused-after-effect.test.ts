/**
 * Issue 51, case 1: a POST under a key whose earlier attempt may have moved money is refused (an
 * egress IP dropped from the allow-list: 403). The refusal says nothing of the earlier attempt, so
 * the flow ends OutcomeUnknown with `mayHaveTakenEffect: true` and its open item holds it; before,
 * the refusal became the outcome ("not moved") while the card held the money. The sandbox's ledger
 * is the proof of what moved.
 */
import type { ApplicationFailure } from '@temporalio/common';
import { openItemId } from '../../src/shared/open-items';
import { openItemQuery } from '../../src/shared/messages';
import { listOpenItems } from '../../src/temporal/open-items';
import { issueTestCard, workflowFailure } from '../helpers/flows';
import { startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { runCli } from '../../src/starter/run';
import { TIMINGS, cardBalance, faults, ledger } from './helpers';

jest.setTimeout(120_000);

let stack: Stack;
afterEach(async () => stack?.close());

const detailsOf = (failure: ApplicationFailure) => (failure.details?.[0] ?? {}) as Record<string, unknown>;

const cli = async (...args: string[]) => {
  let stderr = '';
  const code = await runCli(args, () => stack.config, { stdout: () => undefined, stderr: (t) => (stderr += t) });
  return { code, stderr };
};

/** The first POST takes effect and is never answered (our client gives up after 1 s); every POST after it is refused 403. */
const loseThenRefuse = (endpoint: string) => faults(stack, { [endpoint]: { hangRate: 1, afterEffect: true, maxFaults: 1, refuseAfterFaults: true, refuseStatus: 403 } });

test('fundCard: the answer lost after the money moved, the confirming POST refused 403: OutcomeUnknown with the key, an open item, the card funded once', async () => {
  // minimal: GET /operations shows only a status, so the retry confirms with the same POST under the key (the spec's one way).
  stack = await startStack({ profile: 'minimal', cardProvisioningMs: 50, faults: { hangMs: 5000 } }, { PROVIDER_TIMEOUT_MS: '1000' });
  const card = await issueTestCard(stack, 1000);
  const workflowId = uniqueId('fund-card');
  await loseThenRefuse('POST /cards/{cardId}/funding');
  const handle = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, amount: 300, timings: TIMINGS }] });
  const failure = await workflowFailure(handle.result());
  expect(failure.type).toBe('OutcomeUnknown');
  expect(detailsOf(failure)).toMatchObject({ idempotencyKey: expect.any(String), mayHaveTakenEffect: true });
  expect(await cardBalance(stack, card.cardId)).toBe(1300);
  expect((await ledger(stack)).violations).toEqual([]);
  const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
  await waitUntil(async () => (await listOpenItems(stack.client, stack.taskQueue)).some((i) => i.itemId === itemId), 20_000, 'the open item listed');

  // Case 4: an item cannot vanish by a plain terminate or cancel: exit 2 naming --force and what is lost; the item stays open.
  for (const action of ['terminate', 'cancel']) {
    const refused = await cli(action, itemId, '--reason', 'cleaning up');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is an open item: money that may have moved.*settle it instead.*--force/);
  }
  expect((await listOpenItems(stack.client, stack.taskQueue)).map((i) => i.itemId)).toContain(itemId);
  const forced = await cli('terminate', itemId, '--reason', 'ticket-51', '--force');
  expect(forced.code).toBe(0);
  expect(forced.stderr).toMatch(/--force: it is an open item/);
});

test('issueCard: the card created and its answer lost, the repeat refused 403: OutcomeUnknown with the key and an open item, never a failure that says nothing moved', async () => {
  stack = await startStack({ profile: 'contract', cardProvisioningMs: 50, faults: { hangMs: 5000 } }, { PROVIDER_TIMEOUT_MS: '1000' });
  const workflowId = uniqueId('issue-card');
  const issued = async () => (await ledger(stack)).totals.issued;
  const before = await issued();
  await loseThenRefuse('POST /cards');
  const handle = await stack.client.workflow.start('issueCard', {
    taskQueue: stack.taskQueue,
    workflowId,
    args: [{ cardBinId: 'bin_visa_basic', initialAmount: 1200, firstName: 'Ada', lastName: 'Lovelace', timings: TIMINGS }],
  });
  const failure = await workflowFailure(handle.result());
  expect(failure.type).toBe('OutcomeUnknown');
  expect(detailsOf(failure)).toMatchObject({ idempotencyKey: expect.any(String), endpoint: 'POST /cards', mayHaveTakenEffect: true });
  // The card exists with its initialAmount: what the item is for.
  expect((await issued()) - before).toBe(1200);
  const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
  await waitUntil(async () => (await listOpenItems(stack.client, stack.taskQueue)).some((i) => i.itemId === itemId), 20_000, 'the open item listed');
});

test("case 2: a funding that moved money whose key the provider answers 404 stays an open item; silence closes nothing before it outlasts any read lag, an operator's --found does", async () => {
  stack = await startStack({ profile: 'minimal', cardProvisioningMs: 50, faults: { hangMs: 5000 } }, { PROVIDER_TIMEOUT_MS: '1000' });
  const card = await issueTestCard(stack, 1000);
  const workflowId = uniqueId('fund-card');
  // The money moves and its answer is lost; the repeat is refused; every read of the key answers 404 (read lag, or a provider that forgot).
  await faults(stack, {
    'POST /cards/{cardId}/funding': { hangRate: 1, afterEffect: true, maxFaults: 1, refuseAfterFaults: true, refuseStatus: 403 },
    'GET /operations/{idempotencyKey}': { refuseRate: 1, refuseStatus: 404 },
  });
  const handle = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, amount: 400, timings: TIMINGS }] });
  expect((await workflowFailure(handle.result())).type).toBe('OutcomeUnknown');
  expect(await cardBalance(stack, card.cardId)).toBe(1400);
  const itemId = openItemId({ workflowId, runId: handle.firstExecutionRunId });
  // The item has asked and heard "no record" (its cadence follows the flow's fast timings): it is still open.
  const item = stack.client.workflow.getHandle(itemId);
  await waitUntil(async () => (await item.query(openItemQuery)).lastSaid === 'NO_RECORD', 30_000, 'the item heard no record');
  expect((await item.describe()).status.name).toBe('RUNNING');
  // Settling without a finding is refused, saying why; the operator's finding closes it as theirs.
  const unsure = await cli('settle', itemId);
  expect(unsure.code).toBe(1);
  expect(unsure.stderr).toMatch(/proves nothing until it has lasted 15 minutes/);
  const settled = await cli('settle', itemId, '--found', 'moved', '--note', 'card statement shows +400');
  expect(settled.code).toBe(0);
  expect(await item.result()).toMatchObject({ verdict: 'moved', by: 'operator', providerSaid: 'NO_RECORD' });
});
