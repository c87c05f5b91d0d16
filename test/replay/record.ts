/**
 * Records real histories of every workflow type into test/replay/histories/ (`npm run
 * record-histories`), for test/replay/replay.test.ts to replay against the current workflow
 * code. Re-record after a deliberate, versioned change; keep the histories recorded before it
 * (docs/versioning.md): they are what proves that running workflows still replay.
 *
 * Usage: tsx test/replay/record.ts [outDir] [scenario…]   (default test/replay/histories, every scenario)
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, type WorkflowHandle, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config';
import { sampleFolder, sampleKycForm, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { entityWorkflowId } from '../../src/shared/ids';
import { onboardingWorkflowId } from '../../src/client/requests';
import { relayWorkflowId } from '../../src/nexus/handler';
import { relayToken } from '../../src/nexus/relay-token';
import { DEVELOPMENT_NEXUS_CALLER, scopedKey } from '../../src/nexus/callers';
import { nexusCallerQueue } from '../../src/shared/task-queues';
import { openItemId } from '../../src/shared/open-items';
import { RECONCILIATIONS } from '../../src/shared/reconciliation';
import { cardStateQuery, deleteCardUpdate, fundCardUpdate, freezeCardUpdate, onboardingQuery, providerEventSignal, unfreezeCardUpdate } from '../../src/shared/messages';
import { ensureTemporalCli } from '../../tools/temporal-cli';
import { startDevServer } from '../../tools/dev-server';
import { FAST_TIMINGS, allowed, asBridge, startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { REPLAY_CODEC_ENV } from './codec';

type Recorder = (stack: Stack, save: (name: string, handle: WorkflowHandle, runId?: string) => Promise<void>) => Promise<void>;

const run = (stack: Stack, type: string, input: unknown, workflowId = uniqueId(type)) =>
  stack.client.workflow.start(type, { taskQueue: stack.taskQueue, workflowId, args: [input] });

async function issue(stack: Stack, extra: Record<string, unknown> = {}): Promise<{ handle: WorkflowHandle; cardId: string }> {
  const handle = await run(stack, 'issueCard', { cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'Replay', lastName: 'Test', timings: FAST_TIMINGS, ...extra });
  const card = (await handle.result()) as { cardId: string };
  return { handle, cardId: card.cardId };
}

const SCENARIOS: Record<string, { sandbox?: Record<string, unknown>; env?: Record<string, string>; record: Recorder }> = {
  'issue-card': {
    sandbox: { cardProvisioningMs: 100 },
    async record(stack, save) {
      await save('issue-card-webhook', (await issue(stack)).handle);
      await stack.control('PUT', '/config', { webhook: { dropRate: 1 } });
      const polled = await issue(stack, { timings: { ...FAST_TIMINGS, webhookWaitMs: 200 } });
      await save('issue-card-polling', polled.handle);
      // The card's own workflow polled for it (one-way waiting).
      await save('card-lifecycle-polling-for-issuance', stack.client.workflow.getHandle(entityWorkflowId('card', polled.cardId)));
    },
  },
  'money-and-card-lifecycle': {
    sandbox: { cardProvisioningMs: 100 },
    async record(stack, save) {
      const { cardId } = await issue(stack);
      const fund = await run(stack, 'fundCard', { cardId, amount: 500, timings: FAST_TIMINGS });
      await fund.result();
      await save('fund-card', fund);
      const withdraw = await run(stack, 'withdrawFromCard', { cardId, amount: 200, timings: FAST_TIMINGS });
      await withdraw.result();
      await save('withdraw-from-card', withdraw);
      // The card's workflow with a small history budget: updates, then enough events to continue as new.
      const workflowId = entityWorkflowId('card', cardId);
      await stack.client.workflow.getHandle(workflowId).terminate('recording: restart with a small history budget');
      const card = await stack.client.workflow.start('cardLifecycle', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId, maxHistoryEvents: 60 }] });
      await card.executeUpdate(freezeCardUpdate, { args: [allowed(stack, cardId, 'freeze')] });
      await card.executeUpdate(unfreezeCardUpdate, { args: [allowed(stack, cardId, 'unfreeze')] });
      // Every card money update carries its caller's key (a keyless one is refused); the same update ID twice, the same key.
      const fund1 = uniqueId('replay-fund-1').slice(0, 40);
      await card.executeUpdate(fundCardUpdate, { args: [{ amount: 300, idempotencyKey: fund1, timings: FAST_TIMINGS }], updateId: 'replay-fund-1' });
      await card.executeUpdate(fundCardUpdate, { args: [{ amount: 300, idempotencyKey: fund1, timings: FAST_TIMINGS }], updateId: 'replay-fund-1' });
      for (let n = 0; n < 40; n++) {
        await asBridge(stack, workflowId).signal(providerEventSignal, { eventId: `evt_rec_${n}`, eventType: 'CARD_TRANSACTION', createdAt: 1_767_225_600_000 + n, data: { cardId, amount: n, currency: 'USD', merchantName: 'replay', status: 'APPROVED' } });
      }
      const firstRun = card.firstExecutionRunId;
      await waitUntil(async () => (await stack.client.workflow.getHandle(workflowId).describe()).runId !== firstRun, 60_000, 'continue-as-new');
      const next = stack.client.workflow.getHandle(workflowId);
      // The run the update lands in (it may continue as new again after it, on its small budget).
      const nextRun = (await next.describe()).runId;
      await next.executeUpdate(fundCardUpdate, { args: [{ amount: 100, idempotencyKey: uniqueId('replay-fund-2').slice(0, 40), timings: FAST_TIMINGS }], updateId: 'replay-fund-2' });
      await save('card-lifecycle-first-run', card, firstRun);
      await save('card-lifecycle-after-continue-as-new', next, nextRun);
      await next.terminate('recorded');
    },
  },
  'entities-duplicated-reordered': {
    sandbox: { kycReviewMs: 200, payoutProcessingMs: 150, webhook: { duplicateRate: 1, reorder: true, reorderWindowMs: 400 } },
    async record(stack, save) {
      const dir = sampleFolder();
      try {
        const onboard = await run(stack, 'onboardCardholder', sampleKycForm(writeSampleDocuments(dir).documents, { timings: FAST_TIMINGS }));
        const { id } = (await onboard.result()) as { id: string };
        await save('onboard-cardholder', onboard);
        await save('provider-entity-kyc-duplicated', stack.client.workflow.getHandle(entityWorkflowId('kyc', id)));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const merOrderNo = uniqueId('po').slice(0, 40);
      const send = await run(stack, 'sendPayout', {
        merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 5000,
        payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: FAST_TIMINGS,
      });
      await send.result();
      await save('send-payout', send);
      const track = await run(stack, 'trackPayout', { merOrderNo, timings: FAST_TIMINGS });
      await track.result();
      await save('track-payout', track);
      await save('provider-entity-payout-reordered', stack.client.workflow.getHandle(entityWorkflowId('payout', merOrderNo)));
    },
  },
  'card-deleted': {
    sandbox: { cardProvisioningMs: 300 },
    async record(stack, save) {
      const { cardId } = await issue(stack);
      const card = stack.client.workflow.getHandle(entityWorkflowId('card', cardId));
      await card.executeUpdate(deleteCardUpdate, { args: [allowed(stack, cardId, 'delete')] });
      // The card workflow reads the card until the provider says DELETED (card-deletion-followed).
      await waitUntil(async () => (await card.query(cardStateQuery)).status === 'DELETED', 30_000, 'the card workflow sees DELETED');
      await save('card-lifecycle-deleted', card);
    },
  },
  'outcome-unknown': {
    sandbox: { cardProvisioningMs: 100, operationProcessingMs: 60_000 },
    async record(stack, save) {
      const { cardId } = await issue(stack);
      // A standalone funding whose answer is cut off and whose operation cannot be read (403): OutcomeUnknown.
      await stack.control('PUT', '/config', {
        faults: { endpoints: { 'POST /cards/{cardId}/funding': { truncateRate: 1, maxFaults: 1 }, 'GET /operations/{idempotencyKey}': { refuseRate: 1, refuseStatus: 403 } } },
      });
      const fund = await run(stack, 'fundCard', { cardId, amount: 500, timings: FAST_TIMINGS });
      await fund.result().catch(() => undefined);
      await save('fund-card-outcome-unknown', fund);
      await stack.control('PUT', '/config', { faults: { endpoints: { 'POST /cards/{cardId}/funding': { truncateRate: 0 }, 'GET /operations/{idempotencyKey}': { refuseRate: 0 } } } });
      // A card update the provider holds PROCESSING past its deadline: OutcomeUnknown, the card workflow goes on.
      const card = stack.client.workflow.getHandle(entityWorkflowId('card', cardId));
      await card.executeUpdate(fundCardUpdate, { args: [{ amount: 300, idempotencyKey: uniqueId('replay-held').slice(0, 40), timings: { ...FAST_TIMINGS, deadlineMs: 2000 } }], updateId: 'replay-held-1' }).catch(() => undefined);
      await save('card-lifecycle-update-unknown', card);
      // The funding's open item, asked again once the 403s stopped, closes on the provider's COMPLETED.
      const item = stack.client.workflow.getHandle(openItemId({ workflowId: fund.workflowId, runId: fund.firstExecutionRunId }));
      await item.result();
      await save('open-item-closed-by-provider', item);
    },
  },
  reconciliation: {
    // Windows of 1 s and the sandbox counting in the same windows: the paced reads take seconds.
    sandbox: { cardProvisioningMs: 100, rateLimit: { windowMs: 1000, general: 100, sensitive: 70, balance: 70 } },
    env: { PROVIDER_RATE_WINDOW_MS: '1000', RECONCILE_BUDGET_SHARE: '0.02' },
    async record(stack, save) {
      const { cardId } = await issue(stack);
      const card = stack.client.workflow.getHandle(entityWorkflowId('card', cardId));
      await card.executeUpdate(fundCardUpdate, { args: [{ amount: 300, idempotencyKey: uniqueId('replay-reconcile').slice(0, 40), timings: FAST_TIMINGS }], updateId: 'replay-reconcile-fund' });
      await (await run(stack, 'fundCard', { cardId, amount: 200, timings: FAST_TIMINGS })).result();
      // One item a page and a run: every run continues as new, and the recorded one carries its predecessor's pace.
      const reconcile = async (type: string) => {
        const handle = await run(stack, type, { pageSize: 1, pagesPerRun: 1 });
        await handle.result();
        return handle;
      };
      const money = await reconcile(RECONCILIATIONS.money.workflowType);
      await save('reconcile-money-first-run', money, money.firstExecutionRunId);
      await save('reconcile-money-last-run', stack.client.workflow.getHandle(money.workflowId));
      const cards = await reconcile(RECONCILIATIONS.cards.workflowType);
      await save('reconcile-cards-first-run', cards, cards.firstExecutionRunId);
      await save('refresh-bins', await reconcile(RECONCILIATIONS.bins.workflowType));
      await save('sweep-stuck', await reconcile(RECONCILIATIONS.stuck.workflowType));
    },
  },
  'onboarding-cancelled': {
    // Every provider answer takes 1 s: the cancellations below arrive while the hosted submission is at the provider.
    sandbox: { kycReviewMs: 600_000, faults: { latencyMs: 1000 } },
    // The relays below run on the Nexus queue of development's caller (its worker reads only keys scoped to it).
    env: { NEXUS_CALLERS: JSON.stringify([DEVELOPMENT_NEXUS_CALLER]) },
    async record(stack, save) {
      const hosted = () => ({ mode: 'hosted', firstName: 'Replay', lastName: 'Test', email: 'replay@example.com', timings: FAST_TIMINGS });
      const submitting = async (handle: WorkflowHandle) =>
        waitUntil(async () => ((await handle.describe()).raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'startHostedKyc'), 30_000, 'the submission under way');
      // A cancellation during the submission (kyc-submission-outlives-cancel): it finishes and records its cardholder.
      const cancelled = await run(stack, 'onboardCardholder', hosted());
      await submitting(cancelled);
      await cancelled.cancel();
      await cancelled.result().catch(() => undefined);
      await save('onboard-cardholder-cancelled-in-submission', cancelled);
      // The Nexus operation's relay (started here as its handler does, on the Nexus service's queue): one cancelled, one completed.
      // Its worker writes plain JSON (no codec of ours): so does the client that starts it.
      const plain = new Client({ connection: stack.client.connection, namespace: stack.config.temporal.namespace });
      const relay = async (onboarding: WorkflowHandleWithFirstExecutionRunId, idempotencyKey: string) =>
        plain.workflow.start('onboardingRelay', { taskQueue: nexusCallerQueue(stack.taskQueue, DEVELOPMENT_NEXUS_CALLER.name), workflowId: relayWorkflowId(onboarding.workflowId, onboarding.firstExecutionRunId), args: [{ idempotencyKey, runId: onboarding.firstExecutionRunId, token: relayToken(stack.config.codec, idempotencyKey, onboarding.firstExecutionRunId) }] });
      // Under a key, as the handler starts them (the relay reads only the onboarding under the key).
      const keyed = (idempotencyKey: string) => run(stack, 'onboardCardholder', hosted(), onboardingWorkflowId(idempotencyKey));
      const relayedKey = scopedKey(DEVELOPMENT_NEXUS_CALLER, uniqueId('replay-relay').slice(0, 40));
      const relayed = await keyed(relayedKey);
      const cancelledRelay = await relay(relayed, relayedKey);
      await submitting(relayed);
      await cancelledRelay.cancel();
      await cancelledRelay.result().catch(() => undefined);
      await save('onboarding-relay-cancelled', cancelledRelay);
      const completedKey = scopedKey(DEVELOPMENT_NEXUS_CALLER, uniqueId('replay-relay').slice(0, 40));
      const completed = await keyed(completedKey);
      const completedRelay = await relay(completed, completedKey);
      await waitUntil(async () => (await completed.query(onboardingQuery)).cardholderId !== undefined, 30_000, 'the cardholder');
      const { cardholderId } = await completed.query(onboardingQuery);
      await stack.control('POST', `/kyc/${cardholderId}/decision`, { kycStatus: 'APPROVED' });
      await completedRelay.result();
      await save('onboarding-relay', completedRelay);
    },
  },
  esim: {
    sandbox: { esimIssueMs: 100, esimSlowIssueMs: 1000, esimWaitMs: 200 },
    async record(stack, save) {
      const purchase = await run(stack, 'purchaseEsim', { planNo: 'epln_slow', timings: FAST_TIMINGS });
      const order = (await purchase.result()) as { esimNo: string };
      await save('purchase-esim', purchase);
      const recharge = await run(stack, 'rechargeEsim', { esimNo: order.esimNo, timings: FAST_TIMINGS });
      await recharge.result();
      await save('recharge-esim', recharge);
    },
  },
};

async function main(): Promise<void> {
  const outDir = resolve(process.argv[2] ?? join(__dirname, 'histories'));
  mkdirSync(outDir, { recursive: true });
  const cliPath = await ensureTemporalCli(loadConfig().temporal.cliPath);
  const server = await startDevServer({ cliPath, headless: true });
  process.env.TEST_TEMPORAL_ADDRESS = server.address;
  try {
    // `npm run record-histories -- NAME…` records those scenarios only (the others' files are left as they are).
    const only = process.argv.slice(3);
    for (const [name, scenario] of Object.entries(SCENARIOS).filter(([n]) => only.length === 0 || only.includes(n))) {
      process.stderr.write(`recording ${name}\n`);
      const stack = await startStack(scenario.sandbox ?? {}, { ...REPLAY_CODEC_ENV, ...scenario.env });
      try {
        await scenario.record(stack, async (file, handle, runId) => {
          // The CLI writes the proto3 JSON that historyFromJSON reads (and that `temporal workflow show` users know).
          const args = ['workflow', 'show', '--workflow-id', handle.workflowId, '--output', 'json', '--address', server.address];
          const { stdout } = await promisify(execFile)(cliPath, [...args, ...(runId ? ['--run-id', runId] : [])], { maxBuffer: 64 * 1024 * 1024 });
          const history = JSON.parse(stdout) as { events: unknown[] };
          // Its workflow ID beside its events: a replay runs under it, as the run did (a signal addressed to the workflow is taken).
          writeFileSync(join(outDir, `${file}.json`), `${JSON.stringify({ workflowId: handle.workflowId, ...history }, null, 2)}\n`);
          process.stderr.write(`  ${file}.json (${history.events.length} events)\n`);
        });
      } finally {
        await stack.close();
      }
    }
  } finally {
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
