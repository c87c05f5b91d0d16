/**
 * Issue 51, item 5: a repeat of a flow under the key whose last run ended unsure answers from that
 * run's open item and starts no second run (client/flow-starts.ts, client/settled-updates.ts). Before,
 * the repeat started a new run: a recharge ended OutcomeUnknown again, a second item of one movement.
 * While the item is open: the same OutcomeUnknown, naming the item; once settled MOVED: SettledMoved,
 * naming the record; once settled NOT MOVED: OperationFailed, a new key may try. A definitive failure
 * (nothing moved) is still followed by a new run. The sandbox's ledger is the truth.
 */
import { openItemId, type ClosedItem } from '../../src/shared/open-items';
import { listOpenItems } from '../../src/temporal/open-items';
import { runCli } from '../../src/starter/run';
import type { CardIssuingError } from '../../src/client';
import { clientFailure } from '../helpers/flows';
import { uniqueId, type Stack } from '../helpers/stack';
import { TIMINGS, faults, ledger, requests, stackOn, typedClient } from './helpers';

jest.setTimeout(180_000);

let stack: Stack;
afterEach(async () => stack?.close());

const settle = (...args: string[]) => runCli(['settle', ...args], () => stack.config, { stdout: () => undefined, stderr: () => undefined });

async function runsOf(workflowId: string): Promise<string[]> {
  const runs: string[] = [];
  for await (const run of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(run.runId);
  return runs;
}

const itemOf = (err: CardIssuingError) => err.details.find((d): d is { itemId: string } => typeof (d as { itemId?: unknown } | null)?.itemId === 'string');

test('a recharge whose outcome is unknown, repeated under its key, answers from run 1\'s item: no second run, no second item, one charge; settled MOVED, the repeat answers moved', async () => {
  stack = await stackOn('contract');
  const cards = typedClient(stack);
  const esim = await cards.purchaseEsim({ planNo: 'epln_global_1gb', idempotencyKey: uniqueId('buy').slice(0, 40), timings: TIMINGS });
  const chargedBefore = (await ledger(stack)).totals.charged;
  // The recharge is charged and its answer lost; the spec gives the endpoint no key, so the flow never posts it again.
  await faults(stack, { 'POST /esim/recharge': { ignoreIdempotencyKey: true, errorRate: 1, afterEffect: true } });
  const request = { esimNo: esim.esimNo!, idempotencyKey: uniqueId('rc').slice(0, 40), timings: TIMINGS };

  const first = await clientFailure(cards.rechargeEsim(request));
  expect(first).toMatchObject({ type: 'OutcomeUnknown', mayHaveTakenEffect: true, idempotencyKey: request.idempotencyKey });
  const workflowId = first.workflowId!;
  const [runId] = await runsOf(workflowId);
  const itemId = openItemId({ workflowId, runId });
  expect(itemOf(first)?.itemId).toBe(itemId);
  const charged = (await ledger(stack)).totals.charged;
  expect(charged).toBeGreaterThan(chargedBefore);

  // Repeated, from this client and from a new one: the same answer, the same run, the same item.
  for (const client of [cards, typedClient(stack)]) {
    const again = await clientFailure(client.rechargeEsim(request));
    expect(again).toMatchObject({ type: 'OutcomeUnknown', mayHaveTakenEffect: true, workflowId, idempotencyKey: request.idempotencyKey, message: expect.stringContaining(`settle ${itemId}`) });
    expect(itemOf(again)?.itemId).toBe(itemId);
  }
  expect((await cards.startRechargeEsim(request)).runId).toBe(runId);
  expect(await runsOf(workflowId)).toEqual([runId]);
  expect((await listOpenItems(stack.client, stack.taskQueue)).filter((i) => i.refs.includes(workflowId)).map((i) => i.itemId)).toEqual([itemId]);
  expect(await requests(stack, 'rechargeEsim')).toBe(1);

  // The operator settles it MOVED (the provider's silence proves nothing here): the repeat answers moved, naming the record.
  expect(await settle(itemId, '--found', 'moved', '--note', 'seen in the provider portal')).toBe(0);
  expect((await stack.client.workflow.getHandle(itemId).result()) as ClosedItem).toMatchObject({ verdict: 'moved', by: 'operator' });
  const moved = await clientFailure(cards.rechargeEsim(request));
  expect(moved).toMatchObject({ type: 'SettledMoved', mayHaveTakenEffect: true, workflowId, idempotencyKey: request.idempotencyKey, message: expect.stringContaining('MOVED') });
  expect(moved.details).toContainEqual(expect.objectContaining({ itemId, verdict: 'moved', by: 'operator', note: 'seen in the provider portal' }));
  expect(await runsOf(workflowId)).toEqual([runId]);
  expect(await requests(stack, 'rechargeEsim')).toBe(1);
  expect((await ledger(stack)).totals.charged).toBe(charged);
  expect((await ledger(stack)).violations).toEqual([]);
});

test('settled NOT MOVED by an operator, the repeat answers OperationFailed (a new key may try) and starts nothing; a definitive failure is followed by a new run', async () => {
  stack = await stackOn('contract');
  const cards = typedClient(stack);
  const esim = await cards.purchaseEsim({ planNo: 'epln_global_1gb', idempotencyKey: uniqueId('buy').slice(0, 40), timings: TIMINGS });
  await faults(stack, { 'POST /esim/recharge': { ignoreIdempotencyKey: true, errorRate: 1, afterEffect: true } });
  const request = { esimNo: esim.esimNo!, idempotencyKey: uniqueId('rc').slice(0, 40), timings: TIMINGS };
  const first = await clientFailure(cards.rechargeEsim(request));
  expect(first.type).toBe('OutcomeUnknown');
  const workflowId = first.workflowId!;
  const [runId] = await runsOf(workflowId);
  expect(await settle(openItemId({ workflowId, runId }), '--found', 'not-moved', '--note', 'refunded, ticket OPS-5')).toBe(0);
  const notMoved = await clientFailure(cards.rechargeEsim(request));
  expect(notMoved).toMatchObject({ type: 'OperationFailed', mayHaveTakenEffect: false, workflowId, message: expect.stringContaining('a new idempotency key may try again') });
  expect(await runsOf(workflowId)).toEqual([runId]);

  // A refusal before anything happened (403: an egress IP not allowed) moved nothing: the same call runs again.
  await faults(stack, { 'POST /esim/purchase': { refuseRate: 1, refuseStatus: 403, maxFaults: 1 } });
  const purchase = { planNo: 'epln_global_1gb', idempotencyKey: uniqueId('buy').slice(0, 40), timings: TIMINGS };
  const refused = await clientFailure(cards.purchaseEsim(purchase));
  expect(refused).toMatchObject({ mayHaveTakenEffect: false });
  const order = await cards.purchaseEsim(purchase);
  expect(order.status).toBe('ISSUED');
  expect(await runsOf(refused.workflowId!)).toHaveLength(2);
  expect((await ledger(stack)).violations).toEqual([]);
});
