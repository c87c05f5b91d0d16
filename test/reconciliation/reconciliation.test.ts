/**
 * Reconciliation end to end (issue 22): differences seeded through the sandbox's control API,
 * one run of each schedule (triggered through Temporal Schedules) reports exactly those, the card
 * views are corrected, and a second run no longer reports what was corrected.
 */
import { rmSync } from 'node:fs';
import { SandboxControlClient } from '../../src/sandbox/control-client';
import { sampleFolder, sampleKycForm, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { createProviderClient } from '../../src/provider/client';
import { cardStateQuery, fundCardUpdate, refreshCardBalanceUpdate } from '../../src/shared/messages';
import { entityWorkflowId } from '../../src/shared/ids';
import { RECONCILIATIONS, type DriftReport, type ReconcileKind } from '../../src/shared/reconciliation';
import type { CardLifecycleState, CardView } from '../../src/shared/types';
import { reconcileNow } from '../../src/starter/reconciliation';
import { applySchedules, triggerSchedule, type ScheduleTarget } from '../../src/temporal/schedules';
import { issueTestCard, workflowFailure } from '../helpers/flows';
import { FAST_TIMINGS, startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { spawnWorker } from '../helpers/worker-process';
import type { WorkflowHandle } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';

jest.setTimeout(240_000);

const WINDOW_MS = 1_000;

describe('reconciliation on Temporal Schedules', () => {
  let stack: Stack;
  let sandbox: SandboxControlClient;
  let schedules: ScheduleTarget;
  const seeded = {} as { spent: CardView; funded: CardView; forgotten: CardView; failedFundingKey: string; failedFundingFlow: string; failedUpdateId: string; failedUpdateKey: string; runningKey: string; runningFlow: string; callerKey: string; terminatedFlow: string; merOrderNo: string; payoutFlow: string; cardBinId: string };

  const cardState = (cardId: string) => stack.client.workflow.getHandle(entityWorkflowId('card', cardId)).query(cardStateQuery) as Promise<CardLifecycleState>;
  const runSchedule = async (kind: ReconcileKind): Promise<DriftReport> => {
    const workflowId = await triggerSchedule(schedules, kind);
    return (await stack.client.workflow.getHandle(workflowId).result()) as DriftReport;
  };
  /** The run's reads of GET /cards/{cardId}, from its history: scheduled, and answered. */
  const cardReads = async (handle: WorkflowHandle): Promise<{ scheduled: number; answered: number }> => {
    const scheduled = new Set<string>();
    let answered = 0;
    for (const e of (await handle.fetchHistory()).events ?? []) {
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'reconcileReadCard') scheduled.add(String(e.eventId));
      if (scheduled.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId))) answered++;
    }
    return { scheduled: scheduled.size, answered };
  };
  const kindsAndIds = (report: DriftReport) => report.differences.map((d) => ({ kind: d.kind, ids: d.ids })).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

  beforeAll(async () => {
    // Windows of 1 s and a share of 1 % (one read per window): the runs' pacing shows within seconds.
    // The sandbox counts in windows of the same length, so each read's answer carries the reset of a 1 s window.
    stack = await startStack(
      { payoutProcessingMs: 200, rateLimit: { windowMs: WINDOW_MS, general: 100, sensitive: 70, balance: 70 } },
      { PROVIDER_RATE_WINDOW_MS: String(WINDOW_MS), RECONCILE_BUDGET_SHARE: '0.01' },
    );
    sandbox = new SandboxControlClient(stack.sandboxUrl);
    schedules = { client: stack.client, taskQueue: stack.taskQueue, idSuffix: `-${stack.taskQueue}` };
    const fund = (cardId: string, amount: number, workflowId = uniqueId('fund-card')) =>
      stack.client.workflow.execute('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId, amount, timings: FAST_TIMINGS }] });

    // A card funded by a standalone flow: its workflow marks its view stale when the flow completes, and reads it when asked (no difference) …
    seeded.spent = await issueTestCard(stack, 10_000);
    await fund(seeded.spent.cardId, 2_500);
    const spentCard = stack.client.workflow.getHandle(entityWorkflowId('card', seeded.spent.cardId));
    await waitUntil(async () => (await cardState(seeded.spent.cardId)).movedSinceBalanceRead === true, 20_000, 'the card workflow told of the standalone funding');
    expect((await spentCard.executeUpdate(refreshCardBalanceUpdate, { args: [{ maxAgeMs: 0 }] })).card?.availableBalance).toBe(12_500);
    // … then a spend whose webhook never comes.
    await sandbox.silentCardTransaction(seeded.spent.cardId, 420, 'Coffee without webhook');

    // A funding that failed (wallet short) and that the provider then completed after all.
    seeded.funded = await issueTestCard(stack, 10_000);
    const { availableBalance: wallet } = await sandbox.wallet();
    await sandbox.adjustWallet(-(wallet - 1_000));
    seeded.failedFundingFlow = uniqueId('fund-card');
    const failure = await workflowFailure(fund(seeded.funded.cardId, 5_000, seeded.failedFundingFlow));
    expect(failure.type).toBe('InsufficientFunds');
    // The same on the card workflow itself: a funding update that failed, completed by the provider after all.
    const cardWorkflow = stack.client.workflow.getHandle(entityWorkflowId('card', seeded.funded.cardId));
    seeded.failedUpdateId = uniqueId('fund-update');
    const updateFailure = await cardWorkflow.executeUpdate(fundCardUpdate, { args: [{ amount: 3_000, idempotencyKey: uniqueId('fund-update-key').slice(0, 40), timings: FAST_TIMINGS }], updateId: seeded.failedUpdateId }).then(
      () => undefined,
      (err: unknown) => (err as { cause?: ApplicationFailure }).cause,
    );
    expect(updateFailure?.type).toBe('InsufficientFunds');
    await sandbox.adjustWallet(wallet - 1_000);
    seeded.failedFundingKey = (failure.details as Array<{ idempotencyKey?: string }>).find((d) => d?.idempotencyKey)!.idempotencyKey!;
    await sandbox.completeFailedOperation(seeded.failedFundingKey);
    seeded.failedUpdateKey = (updateFailure!.details as Array<{ idempotencyKey?: string }>).find((d) => d?.idempotencyKey)!.idempotencyKey!;
    await sandbox.completeFailedOperation(seeded.failedUpdateKey);

    // A funding under its caller's key whose flow was terminated before it ran, and that the provider
    // completed under that key all the same (posted by another hand).
    seeded.callerKey = uniqueId('order').slice(0, 40);
    seeded.terminatedFlow = uniqueId('fund-card');
    await stack.stopWorkers();
    await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId: seeded.terminatedFlow, args: [{ cardId: seeded.funded.cardId, amount: 1_000, idempotencyKey: seeded.callerKey, timings: FAST_TIMINGS }] });
    await stack.client.workflow.getHandle(seeded.terminatedFlow).terminate('test: ended before it ran');
    await stack.startWorkers();
    const provider = createProviderClient(stack.config.provider);
    await provider.fundCard(seeded.funded.cardId, { amount: 1_000 }, { idempotencyKey: seeded.callerKey });

    // A funding still running (its start delayed) whose caller's key the provider already holds for another amount.
    seeded.runningKey = uniqueId('order').slice(0, 40);
    seeded.runningFlow = uniqueId('fund-card');
    await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId: seeded.runningFlow, startDelay: '1 hour', args: [{ cardId: seeded.funded.cardId, amount: 1_000, idempotencyKey: seeded.runningKey, timings: FAST_TIMINGS }] });
    await provider.fundCard(seeded.funded.cardId, { amount: 1_500 }, { idempotencyKey: seeded.runningKey }).finally(() => provider.close());

    // A card the provider forgets.
    seeded.forgotten = await issueTestCard(stack, 10_000);
    await sandbox.forgetCard(seeded.forgotten.cardId);

    // A payout we saw COMPLETED that the provider later says FAILED, with no webhook.
    seeded.merOrderNo = uniqueId('po').slice(0, 40);
    seeded.payoutFlow = uniqueId('send-payout');
    const payout = await stack.client.workflow.execute('sendPayout', {
      taskQueue: stack.taskQueue,
      workflowId: seeded.payoutFlow,
      args: [{ merOrderNo: seeded.merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 10_000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: FAST_TIMINGS }],
    });
    expect(payout).toMatchObject({ status: 'COMPLETED' });
    await sandbox.rewritePayoutStatus(seeded.merOrderNo, 'FAILED');

    // A BIN the provider adds.
    seeded.cardBinId = `bin_new_${Date.now()}`;
    await sandbox.addCardBin({ cardBinId: seeded.cardBinId, bin: '400000', brand: 'VISA', issuingCountry: 'SG', currency: 'USD' });

    expect(await applySchedules(schedules)).toEqual(Object.fromEntries(['reconcile-money', 'reconcile-cards', 'refresh-bins', 'sweep-stuck'].map((id) => [`${id}${schedules.idSuffix}`, 'created'])));
  });

  afterAll(async () => {
    for (const id of ['reconcile-money', 'reconcile-cards', 'refresh-bins', 'sweep-stuck']) await stack?.client.schedule.getHandle(`${id}${schedules?.idSuffix}`).delete().catch(() => undefined);
    await stack?.close();
  });

  test("reconcile-money finds the funding completed behind a failed flow, and behind a failed card update, the one completed under the caller's key of a flow terminated before it ran, a running flow's key held for another amount, and the payout failed behind a completed one, and nothing else", async () => {
    const report = await runSchedule('money');
    expect(report.kind).toBe('money');
    expect(report.checked).toBeGreaterThanOrEqual(5); // the good funding, the failed one, the terminated and the running one, the payout, the card workflows
    expect(kindsAndIds(report)).toEqual(
      [
        { kind: 'done-not-at-provider', ids: { merOrderNo: seeded.merOrderNo } },
        { kind: 'moved-unaccounted', ids: { idempotencyKey: seeded.failedFundingKey } },
        { kind: 'moved-unaccounted', ids: { idempotencyKey: seeded.failedUpdateKey, updateId: seeded.failedUpdateId } },
        { kind: 'moved-unaccounted', ids: { idempotencyKey: seeded.callerKey } },
        { kind: 'amount-differs', ids: { idempotencyKey: seeded.runningKey } },
      ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
    const byKeyAndKind = Object.fromEntries(report.differences.map((d) => [`${d.kind}/${d.ids.idempotencyKey}`, d]));
    expect(byKeyAndKind[`moved-unaccounted/${seeded.failedUpdateKey}`]).toMatchObject({
      workflowId: entityWorkflowId('card', seeded.funded.cardId),
      ours: { status: 'InsufficientFunds' },
      provider: { status: 'COMPLETED', amount: 3_000 },
    });
    expect(byKeyAndKind[`amount-differs/${seeded.runningKey}`]).toMatchObject({ workflowId: seeded.runningFlow, ours: { status: 'RUNNING', amount: 1_000 }, provider: { amount: 1_500 } });
    await stack.client.workflow.getHandle(seeded.runningFlow).terminate('test: seen by reconcile-money');
    const byKey = Object.fromEntries(report.differences.map((d) => [d.ids.idempotencyKey ?? d.kind, d]));
    expect(byKey[seeded.failedFundingKey]).toMatchObject({ workflowId: seeded.failedFundingFlow, ours: { status: 'InsufficientFunds' }, provider: { status: 'COMPLETED', amount: 5_000 } });
    expect(byKey[seeded.callerKey]).toMatchObject({ workflowId: seeded.terminatedFlow, ours: { status: 'TERMINATED' }, provider: { status: 'COMPLETED', amount: 1_000 } });
    const byKind = Object.fromEntries(report.differences.map((d) => [d.kind, d]));
    expect(byKind['done-not-at-provider']).toMatchObject({ workflowId: seeded.payoutFlow, ours: { status: 'COMPLETED' }, provider: { status: 'FAILED' } });
    expect(report.corrected).toBe(0);
  });

  test('reconcile-cards finds the unannounced spend, the completed funding and the forgotten card, and corrects the two card views', async () => {
    const report = await runSchedule('cards');
    expect(report.checked).toBe(3);
    expect(report.differences).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'card-balance-differs', ids: { cardId: seeded.spent.cardId }, ours: 12_500, provider: 12_080 }),
        expect.objectContaining({ kind: 'card-balance-differs', ids: { cardId: seeded.funded.cardId }, ours: 10_000, provider: 20_500 }),
        expect.objectContaining({ kind: 'card-unknown-at-provider', ids: { cardId: seeded.forgotten.cardId } }),
      ]),
    );
    expect(report.differences).toHaveLength(3);
    expect(report.corrected).toBe(2);
    await waitUntil(async () => (await cardState(seeded.spent.cardId)).card?.availableBalance === 12_080, 10_000, 'the spent card view corrected');
    const funded = await cardState(seeded.funded.cardId);
    expect(funded.card?.availableBalance).toBe(20_500);
    expect(funded.balanceReadAt).toEqual(expect.any(Number));
    const ledger = await sandbox.ledger();
    expect(ledger.cards.find((c) => c.cardId === seeded.spent.cardId)?.availableBalance).toBe(12_080);
  });

  test('refresh-bins reports the new BIN; sweep-stuck finds no stuck flow', async () => {
    const bins = await runSchedule('bins');
    expect(kindsAndIds(bins)).toEqual([{ kind: 'bin-added', ids: { cardBinId: seeded.cardBinId } }]);
    const stuck = await runSchedule('stuck');
    expect(stuck).toMatchObject({ kind: 'stuck', differences: [], corrected: 0 });
  });

  test('a second run reports none of the corrected differences; a run paged one card at a time continues-as-new and says the same', async () => {
    const cards = await runSchedule('cards');
    expect(kindsAndIds(cards)).toEqual([{ kind: 'card-unknown-at-provider', ids: { cardId: seeded.forgotten.cardId } }]);
    expect(kindsAndIds(await runSchedule('bins'))).toEqual([]);

    const [paged] = await reconcileNow({ client: stack.client, taskQueue: stack.taskQueue }, ['cards'], { pageSize: 1, pagesPerRun: 1 });
    expect(paged).toMatchObject({ checked: 3, corrected: 0 });
    expect(kindsAndIds(paged)).toEqual(kindsAndIds(cards));
    const runs: string[] = [];
    for await (const run of stack.client.workflow.list({ query: `WorkflowType = '${RECONCILIATIONS.cards.workflowType}' AND TaskQueue = '${stack.taskQueue}' AND ExecutionStatus = 'ContinuedAsNew'` })) runs.push(run.runId);
    expect(runs.length).toBeGreaterThanOrEqual(3);
  });

  test("refresh-bins compares against the last run's report: a run on a fresh worker (its BIN cache empty) still reports what the provider added and withdrew", async () => {
    // The baseline: a run that reports the provider's list as it is now (whatever the tests before it did).
    expect((await runSchedule('bins')).bins).toContain(seeded.cardBinId);
    await stack.stopWorkers();
    const worker = spawnWorker(stack, { PROVIDER_RATE_WINDOW_MS: String(WINDOW_MS), RECONCILE_BUDGET_SHARE: '0.01' });
    try {
      const added = `bin_newer_${Date.now()}`;
      await sandbox.addCardBin({ cardBinId: added, bin: '400001', brand: 'VISA', issuingCountry: 'SG', currency: 'USD' });
      await sandbox.removeCardBin(seeded.cardBinId);
      const report = await runSchedule('bins');
      expect(kindsAndIds(report)).toEqual([
        { kind: 'bin-added', ids: { cardBinId: added } },
        { kind: 'bin-removed', ids: { cardBinId: seeded.cardBinId } },
      ]);
      expect(report.bins).toContain(added);
      expect(report.bins).not.toContain(seeded.cardBinId);
    } finally {
      await worker.kill();
      await stack.startWorkers();
    }
  });

  test("a run reads within its share of each window (one read here), each read behind the flows' calls (lowest priority)", async () => {
    const workflowId = await triggerSchedule(schedules, 'cards');
    const handle = stack.client.workflow.getHandle(workflowId);
    await handle.result();
    const reads: Array<{ scheduledAt: number; priorityKey?: number | null }> = [];
    const startedAt = new Map<string, number>();
    const eventTime = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
    const scheduledIds = new Set<string>();
    for (const e of (await handle.fetchHistory()).events ?? []) {
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name === 'reconcileReadCard') {
        scheduledIds.add(String(e.eventId));
        reads.push({ scheduledAt: eventTime(e), priorityKey: scheduled.priority?.priorityKey });
      }
      const started = e.activityTaskStartedEventAttributes;
      if (started && scheduledIds.has(String(started.scheduledEventId))) startedAt.set(String(started.scheduledEventId), eventTime(e));
    }
    expect(reads).toHaveLength(3);
    expect(reads.every((r) => r.priorityKey === 5)).toBe(true);
    // Each read goes once the provider's window the one before landed in has ended (its X-RateLimit-Reset):
    // never two in one window. The earlier read reached the provider after it started, so in this window or a later one.
    const starts = [...startedAt.values()].sort((a, b) => a - b);
    const windowOf = (t: number) => Math.floor(t / WINDOW_MS);
    for (let i = 1; i < reads.length; i++) expect(windowOf(reads[i].scheduledAt)).toBeGreaterThan(windowOf(starts[i - 1]));
  });

  test('a run whose worker is killed mid-way resumes where it was: each card read once, the same report', async () => {
    await stack.stopWorkers();
    const handle = stack.client.workflow.getHandle(await triggerSchedule(schedules, 'cards'));
    // A worker in its own process, killed with SIGKILL between two reads of the run (one read a second).
    const worker = spawnWorker(stack, { PROVIDER_RATE_WINDOW_MS: String(WINDOW_MS), RECONCILE_BUDGET_SHARE: '0.01' });
    try {
      await waitUntil(async () => (await cardReads(handle)).answered >= 1, 60_000, 'the first card read answered');
    } finally {
      await worker.kill();
    }
    expect((await cardReads(handle)).answered).toBeLessThan(3);
    await stack.startWorkers();
    const report = (await handle.result()) as DriftReport;
    expect(report.checked).toBe(3);
    expect(kindsAndIds(report)).toEqual([{ kind: 'card-unknown-at-provider', ids: { cardId: seeded.forgotten.cardId } }]);
    expect(await cardReads(handle)).toEqual({ scheduled: 3, answered: 3 });
  });

  test('sweep-stuck reports a flow running longer than expected, with where it waits', async () => {
    await sandbox.configure({ cardProvisioningMs: 600_000 });
    const issuing = uniqueId('issue-card');
    await stack.client.workflow.start('issueCard', { taskQueue: stack.taskQueue, workflowId: issuing, args: [{ cardBinId: 'bin_visa_basic', initialAmount: 1_000, firstName: 'Slow', lastName: 'Card', timings: FAST_TIMINGS }] });
    await waitUntil(async () => (await stack.client.workflow.count(`WorkflowId = '${issuing}' AND FlowKind = 'issueCard'`)).count === 1, 10_000, 'the flow searchable by kind');
    await new Promise((r) => setTimeout(r, 1_500));
    const [report] = await reconcileNow({ client: stack.client, taskQueue: stack.taskQueue }, ['stuck'], { stuckAfter: '1s' });
    expect(report.differences).toEqual([expect.objectContaining({ kind: 'flow-stuck', ids: { workflowId: issuing, flowKind: 'issueCard' }, workflowId: issuing, ours: expect.objectContaining({ expectedMs: 1_000, waitingOn: expect.any(Array) }) })]);
    await stack.client.workflow.getHandle(issuing).terminate('test done');
    await sandbox.configure({ cardProvisioningMs: 300 });
  });

  test('sweep-stuck does not page an onboarding whose KYC review is simply PENDING, within its kind\'s time (issue 41)', async () => {
    await sandbox.configure({ kycReviewMs: 600_000 });
    const folder = sampleFolder();
    try {
      const onboarding = uniqueId('onboard');
      const handle = await stack.client.workflow.start('onboardCardholder', { taskQueue: stack.taskQueue, workflowId: onboarding, args: [sampleKycForm(writeSampleDocuments(folder).documents, { timings: FAST_TIMINGS })] });
      await waitUntil(async () => (await stack.client.workflow.count(`WorkflowId = '${onboarding}' AND ProviderStatus = 'PENDING'`)).count === 1, 30_000, 'the onboarding parked on its PENDING review');
      const [report] = await reconcileNow({ client: stack.client, taskQueue: stack.taskQueue }, ['stuck'], {});
      expect(report.differences.filter((d) => d.workflowId === onboarding)).toEqual([]);
      await handle.terminate('test done');
    } finally {
      rmSync(folder, { recursive: true, force: true });
      await sandbox.configure({ kycReviewMs: 500 });
    }
  });
});
