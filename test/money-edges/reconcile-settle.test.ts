/**
 * Money at the edges, the last mile (issue 29), case 8 and the settlement: reconcile-money looks
 * at every flow that may have moved money, however it ended (a sendPayout that ended
 * OutcomeUnknown, a purchaseEsim terminated after the charge, an issueCard terminated after its
 * card was funded, a keyless funding posted under the key an earlier version derived), and names
 * the flow, the key and the provider's record; `starter settle` asks the provider under every key,
 * records what it found, and reconciliation stops reporting what was settled.
 */
import { createProviderClient } from '../../src/provider/client';
import { legacyIdempotencyKey } from '../../src/shared/ids';
import { openItemId } from '../../src/shared/open-items';
import type { Difference, DriftReport } from '../../src/shared/reconciliation';
import { runCli } from '../../src/starter/run';
import { reconcileNow } from '../../src/starter/reconciliation';
import { issueTestCard, workflowFailure } from '../helpers/flows';
import { fixtureBins } from '../helpers/provider';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { readUntil, waitUntil } from '../helpers/wait';
import { faults, ledger, requests } from './helpers';

jest.setTimeout(240_000);

let stack: Stack;
const seeded: Record<string, string> = {};

const cli = async (...args: string[]) => {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, () => stack.config, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr, json: () => JSON.parse(stdout.trim()) };
};

async function reconcileMoney(): Promise<DriftReport> {
  const [report] = await reconcileNow({ client: stack.client, taskQueue: stack.taskQueue }, ['money'], { since: '1h' });
  return report;
}

const about = (report: DriftReport, workflowId: string): Difference[] => report.differences.filter((d) => d.workflowId === workflowId);

beforeAll(async () => {
  stack = await startStack({ profile: 'contract', cardProvisioningMs: 50, esimIssueMs: 50, payoutProcessingMs: 300, faults: { hangMs: 5000 } }, { PROVIDER_TIMEOUT_MS: '1000' });
  const start = (type: string, workflowId: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    stack.client.workflow.start(type, { taskQueue: stack.taskQueue, workflowId, args: [{ timings: FAST_TIMINGS, ...input }], ...extra });

  // A payout created at the provider, then its flow terminated while it paid out.
  seeded.merOrderNo = uniqueId('po').slice(0, 32);
  seeded.payoutFlow = `send-payout/${seeded.merOrderNo}`;
  await stack.control('PUT', '/config', { payoutProcessingMs: 3_000 });
  const payout = await start('sendPayout', seeded.payoutFlow, {
    merOrderNo: seeded.merOrderNo,
    paymentType: 'BANK_TRANSFER',
    arriveCurrency: 'EUR',
    arriveAmount: 5_000,
    payeeFirstName: 'Ada',
    payeeLastName: 'Lovelace',
    payeeAccountNo: 'GB29NWBK60161331926819',
  });
  await waitUntil(async () => (await requests(stack, 'createPayout')) >= 1, 30_000, 'the payout was created');
  await payout.terminate('test: lost while the payout paid out');
  await stack.control('PUT', '/config', { payoutProcessingMs: 300 });

  // A funding that timed out after its effect, then every read of its operation refused (403): OutcomeUnknown with its key.
  const card = await issueTestCard(stack, 1_000);
  seeded.unknownFlow = uniqueId('fund-card');
  await faults(stack, { 'POST /cards/{cardId}/funding': { hangRate: 1, afterEffect: true, maxFaults: 1 }, 'GET /operations/{idempotencyKey}': { refuseRate: 1, refuseStatus: 403 } });
  const unknownRun = await start('fundCard', seeded.unknownFlow, { cardId: card.cardId, amount: 2_500 });
  seeded.unknownRun = unknownRun.firstExecutionRunId;
  const unknown = await workflowFailure(unknownRun.result());
  expect(`${unknown.type}: ${unknown.message}`).toMatch(/^OutcomeUnknown/);
  seeded.unknownKey = String((unknown.details?.[0] as { idempotencyKey?: string }).idempotencyKey);
  await faults(stack, {});

  // A purchase charged, then its flow terminated before the order was issued (its key derived from the workflow ID).
  await stack.control('PUT', '/config', { esimIssueMs: 3_000 });
  const charged = (await ledger(stack)).totals.charged ?? 0;
  seeded.purchaseFlow = uniqueId('purchase-esim');
  const purchase = await start('purchaseEsim', seeded.purchaseFlow, { planNo: 'epln_global_1gb' });
  await waitUntil(async () => ((await ledger(stack)).totals.charged ?? 0) > charged, 30_000, 'the purchase was charged');
  await purchase.terminate('test: lost after the charge');
  // The provider goes on and issues the order: its operation then says COMPLETED.
  await new Promise((r) => setTimeout(r, 3_500));

  // A card funded with its initialAmount, then its issueCard terminated before CARD_CREATED: the card it recorded (CardId) is ENABLE later.
  await stack.control('PUT', '/config', { cardProvisioningMs: 4_000 });
  const { plain } = await fixtureBins(stack);
  seeded.issueFlow = uniqueId('issue-card');
  const issuing = await start('issueCard', seeded.issueFlow, { cardBinId: plain.cardBinId, initialAmount: 1_000, firstName: 'Test', lastName: 'Holder' });
  await waitUntil(async () => typeof (await issuing.describe()).searchAttributes.CardId?.[0] === 'string', 30_000, 'issueCard recorded its card');
  seeded.cardId = String((await issuing.describe()).searchAttributes.CardId?.[0]);
  await issuing.terminate('test: lost before CARD_CREATED');
  const reader = createProviderClient(stack.config.provider);
  await waitUntil(async () => (await reader.getCard(seeded.cardId)).status === 'ENABLE', 30_000, 'the provider provisioned the card').finally(() => reader.close());
  expect((await ledger(stack)).cards.find((c) => c.cardId === seeded.cardId)?.availableBalance).toBe(1_000);
  await stack.control('PUT', '/config', { cardProvisioningMs: 50, esimIssueMs: 50 });

  // A keyless funding whose earlier version posted under its FNV key; the flow itself then lost.
  const funded = await issueTestCard(stack, 1_000);
  seeded.legacyFlow = uniqueId('fund-card');
  const legacy = await start('fundCard', seeded.legacyFlow, { cardId: funded.cardId, amount: 1_200 }, { startDelay: '1 hour' });
  seeded.legacyKey = legacyIdempotencyKey('fund', seeded.legacyFlow);
  const provider = createProviderClient(stack.config.provider);
  await provider.fundCard(funded.cardId, { amount: 1_200 }, { idempotencyKey: seeded.legacyKey }).finally(() => provider.close());
  await legacy.terminate('test: an earlier version posted, then the flow was lost');
});

afterAll(async () => stack?.close());

describe('case 8: reconcile-money looks at every flow that may have moved money, however it ended', () => {
  test('a terminated payout, purchase and card issuance are items at once (their attempts), closed MOVED by the provider, so it finds them accounted for; a keyless funding of an earlier build, which recorded no attempt, it names with its key and the provider record and opens an item for; an OutcomeUnknown funding whose item closed MOVED is no difference', async () => {
    // The funding that ended OutcomeUnknown opened its item, which asked the provider once the 403s stopped.
    const item = stack.client.workflow.getHandle(openItemId({ workflowId: seeded.unknownFlow, runId: seeded.unknownRun }));
    await waitUntil(async () => (await item.describe()).status.name === 'COMPLETED', 60_000, 'the funding\'s open item to close');
    expect(await item.result()).toMatchObject({ verdict: 'moved', by: 'provider', providerSaid: 'COMPLETED', item: { idempotencyKey: seeded.unknownKey, amount: 2_500 } });
    // Issue 51: the flows terminated while the provider worked recorded their attempt before their POST, so each was an
    // open item at once, which the provider's word closed "moved": reconcile-money finds them accounted for.
    for (const [flow, ref] of [[seeded.payoutFlow, seeded.merOrderNo], [seeded.issueFlow, seeded.cardId]] as const) {
      const itemOf = stack.client.workflow.getHandle(openItemId({ workflowId: flow, runId: (await stack.client.workflow.getHandle(flow).describe()).runId }));
      await waitUntil(async () => (await itemOf.describe()).status.name === 'COMPLETED', 60_000, `the item of ${flow} to close`);
      expect(await itemOf.result()).toMatchObject({ verdict: 'moved', by: 'provider', item: { lookup: { ref } } });
    }
    const purchaseItem = stack.client.workflow.getHandle(openItemId({ workflowId: seeded.purchaseFlow, runId: (await stack.client.workflow.getHandle(seeded.purchaseFlow).describe()).runId }));
    await waitUntil(async () => (await purchaseItem.describe()).status.name === 'COMPLETED', 60_000, 'the purchase item to close');
    const report = await reconcileMoney();
    for (const flow of [seeded.payoutFlow, seeded.purchaseFlow, seeded.issueFlow]) expect(about(report, flow)).toEqual([]);
    // The backstop: a flow of an earlier build recorded no attempt; reconcile-money names it and opens its item.
    expect(about(report, seeded.legacyFlow)).toEqual([
      expect.objectContaining({ kind: 'moved-unaccounted', flowKind: 'fundCard', ids: { idempotencyKey: seeded.legacyKey }, ours: { status: 'TERMINATED' }, provider: { status: 'COMPLETED', amount: 1_200 } }),
    ]);
    // Case 2: a flow that closed without a word while the provider worked, and recorded no attempt, is an open item now, with no look-back window.
    const listedRefs = async () => ((await cli('open', '--json')).json().result.openItems as Array<{ refs: string[] }>).map((i) => i.refs);
    const open = await readUntil(listedRefs, (refs) => refs.some((r) => r.includes(seeded.legacyFlow)));
    expect(open).toContainEqual(expect.arrayContaining([seeded.legacyFlow]));
  });
});

describe('settle: one command asks the provider under every key, records what it found, and reconciliation stops reporting it', () => {
  test('settle by key and by workflow ID says MOVED, records the settlement, and the next reconcile-money no longer reports those flows', async () => {
    // The funding's item closed by itself: settling by its key answers its record.
    const byKey = await cli('settle', seeded.unknownKey, '--json');
    expect(byKey.code).toBe(0);
    expect(byKey.json().result).toMatchObject({ item: { owner: { workflowId: seeded.unknownFlow }, flowKind: 'fundCard', idempotencyKey: seeded.unknownKey }, verdict: 'moved', by: 'provider', settledBefore: true });
    // The payout's item closed by the provider's word already (its attempt): settling answers that record.
    const payout = await cli('settle', seeded.payoutFlow, '--note', 'ticket OPS-1', '--json');
    expect(payout.json().result).toMatchObject({ verdict: 'moved', by: 'provider', settledBefore: true });
    expect(payout.code).toBe(0);

    const byId = await cli('settle', seeded.legacyFlow);
    expect(byId.code).toBe(0);
    expect(byId.stdout).toContain('MOVED');
    expect(byId.stdout).toContain(seeded.legacyKey);

    const again = await cli('settle', seeded.payoutFlow, '--json');
    expect(again.code).toBe(0);
    expect(again.json().result).toMatchObject({ verdict: 'moved', settledBefore: true });

    const report = await reconcileMoney();
    expect(about(report, seeded.payoutFlow)).toEqual([]);
    expect(about(report, seeded.issueFlow)).toEqual([]);
    expect(about(report, seeded.legacyFlow)).toEqual([]);
    expect(about(report, seeded.purchaseFlow)).toEqual([]);
  });

  test('bad input names the rule and starts nothing; an operator word that contradicts the provider records nothing', async () => {
    const bad = await cli('settle', seeded.purchaseFlow, '--found', 'maybe');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--found must be one of moved, not-moved');
    const missing = await cli('settle', 'no-such-flow-or-key');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no-such-flow-or-key');
    const contradicted = await cli('settle', seeded.purchaseFlow, '--found', 'not-moved');
    expect(contradicted.code).toBe(1);
    // Its item closed by the provider's word (its attempt): the contradicting word is refused against that record.
    expect(contradicted.stderr).toMatch(/found says not-moved, its record says moved \(closed .* by the provider's answer\); nothing recorded/);
    const report = await reconcileMoney();
    expect(about(report, seeded.purchaseFlow)).toEqual([]);
  });
});
