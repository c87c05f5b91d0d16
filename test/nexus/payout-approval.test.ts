/**
 * A Nexus caller's payout above its payoutApprovalAbove (issue 50; docs/nexus.md, "Payouts that need
 * an approval"): it starts, is listed as awaiting approval, and sends nothing to the provider until an
 * operator approves it with a key the caller's payoutApprovers names and the workers trust; then it
 * pays once. A decision signed by a service's key, by an approver's key the workers do not list, by a
 * forged key, or bound to another payout or amount is refused and changes nothing; a rejection, or no
 * decision in time, ends the payout PayoutNotApproved with nothing sent. The sandbox's ledger and its
 * request counts are the truth. A caller in its own namespace calls through its own endpoint, as in
 * test/nexus/callers.test.ts; the operator decides with the CLI.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { CardActionSigner, cardActionPublicKeyOf, newCardActionKeyPair } from '../../src/codec/card-capability';
import { DEVELOPMENT_CARD_ACTION_KEY } from '../../src/config/keys';
import type { Config } from '../../src/config';
import { approvePayoutUpdate, payoutApprovalQuery } from '../../src/shared/messages';
import type { PayoutApprovalState } from '../../src/shared/card-capability';
import { FAST_TIMINGS, startStack, temporalAddress, uniqueId, type Stack } from '../helpers/stack';
import { jsonOf, runInProcess } from '../starter/cli-helpers';
import { waitUntil } from '../helpers/wait';
import type { CallerOutcome } from '../../examples/nexus-caller-ts/workflows';

jest.setTimeout(180_000);

const TS_CALLER = require.resolve('../../examples/nexus-caller-ts/workflows');
const CALLER_QUEUE = 'ts-payouts';

/** The operator who may approve (listed by the workers), one approver whose key the workers no longer list, and a stranger holding neither. */
const ALICE = newCardActionKeyPair();
const GONE = newCardActionKeyPair();
const FORGER = newCardActionKeyPair();

/** `pay`: above 50.00 a payout waits up to 10 min for ops-alice or ops-gone; `pay-short` waits 3 s. Neither pays above 1000.00. */
const PAY = { name: 'pay', operations: ['sendPayout'], payoutLimit: 100_000, payoutApprovalAbove: 5_000, payoutApprovers: ['ops-alice', 'ops-gone'], payoutApprovalWaitMs: 600_000 };
const PAY_SHORT = { ...PAY, name: 'pay-short', payoutApprovalWaitMs: 3_000 };

let stack: Stack;
let callerConnection: Connection;
let caller: Client;
let nativeConnection: NativeConnection;
let callerWorker: Worker;
let callerWorkerRun: Promise<void>;
let base: string;

beforeAll(async () => {
  const callerNamespace = `payout-caller-${randomUUID().slice(0, 8)}`;
  const trusted = `dev:${cardActionPublicKeyOf(DEVELOPMENT_CARD_ACTION_KEY)},ops-alice:${ALICE.publicKey}`;
  const bundle = bundleWorkflowCode({ workflowsPath: TS_CALLER, logger: { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (m: string) => process.stderr.write(`${m}\n`), log: () => undefined } });
  stack = await startStack({}, { NEXUS_CALLERS: JSON.stringify([PAY, PAY_SHORT].map((c) => ({ ...c, namespace: callerNamespace }))), CARD_ACTION_TRUSTED_KEYS: trusted });
  callerConnection = await Connection.connect({ address: temporalAddress() });
  await callerConnection.workflowService.registerNamespace({ namespace: callerNamespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  await waitUntil(async () => callerConnection.workflowService.describeNamespace({ namespace: callerNamespace }).then(() => true, () => false), 20_000, `the caller namespace ${callerNamespace} registered`);
  caller = new Client({ connection: callerConnection, namespace: callerNamespace });
  base = `card-issuing-${randomUUID().slice(0, 8)}`;
  expect((await runInProcess(stack, ['nexus-endpoint', '--name', base, '--json'])).code).toBe(0);
  nativeConnection = await NativeConnection.connect({ address: temporalAddress() });
  callerWorker = await Worker.create({ connection: nativeConnection, namespace: callerNamespace, taskQueue: CALLER_QUEUE, workflowBundle: { code: (await bundle).code } });
  callerWorkerRun = callerWorker.run();
});

afterAll(async () => {
  callerWorker?.shutdown();
  await callerWorkerRun?.catch(() => undefined);
  await nativeConnection?.close();
  await callerConnection?.close();
  await stack?.close();
});

/** The CLI's configuration with the operator's own signing key: `keyId` signed with `privateKey`. */
const operator = (keyId: string, privateKey: string, subject = `${keyId}@ops`): Config => ({ ...stack.config, cardActions: { ...stack.config.cardActions, signing: { keyId, privateKey, subject } } });

const payoutsPosted = async () => ((await stack.control('GET', '/stats')).endpoints.createPayout?.requests ?? 0) as number;
const payoutsRead = async () => ((await stack.control('GET', '/stats')).endpoints.getPayout?.requests ?? 0) as number;
const charged = async () => (await stack.control<{ totals: Record<string, number> }>('GET', '/ledger')).totals.charged;

interface Started {
  handle: WorkflowHandle;
  /** Our flow's ID and its merOrderNo, as they are held: scoped to the caller. */
  workflowId: string;
  merOrderNo: string;
}

/** A caller's sendPayout through its endpoint, left running: the caller's workflow waits for our answer. */
async function startPayout(callerName: string, arriveAmount: number): Promise<Started> {
  const key = uniqueId('held').slice(0, 40);
  const merOrderNo = uniqueId('po').slice(0, 30);
  const request = { idempotencyKey: key, merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount, payeeFirstName: 'Bo', payeeLastName: 'Payee', payeeAccountNo: 'GB29NWBK60161331926819', timings: FAST_TIMINGS };
  const handle = await caller.workflow.start('operationThroughNexus', { taskQueue: CALLER_QUEUE, workflowId: uniqueId('caller-payout'), args: [`${base}-${callerName}`, 'sendPayout', request] });
  return { handle, workflowId: `send-payout/${callerName}_${key}`, merOrderNo: `${callerName}_${merOrderNo}` };
}

/** Our flow, once it waits for a decision. */
async function awaiting(workflowId: string): Promise<PayoutApprovalState> {
  let state: PayoutApprovalState | undefined;
  await waitUntil(
    async () => {
      state = await stack.client.workflow.getHandle(workflowId).query(payoutApprovalQuery).catch(() => undefined);
      return state?.state === 'awaiting';
    },
    30_000,
    `${workflowId} awaiting approval`,
  );
  return state!;
}

test('a payout above payoutApprovalAbove starts, is listed, and moves nothing until an approver approves it; then it pays once', async () => {
  const [postedBefore, readBefore, chargedBefore] = [await payoutsPosted(), await payoutsRead(), await charged()];
  const payout = await startPayout('pay', 20_000);
  const state = await awaiting(payout.workflowId);
  expect(state).toMatchObject({ merOrderNo: payout.merOrderNo, arriveAmount: 20_000, arriveCurrency: 'EUR', caller: 'pay', above: 5_000, payeeAccountEnd: '6819' });

  await waitUntil(async () => {
    const listed = jsonOf(await runInProcess(stack, ['payouts-awaiting', '--json']));
    return listed.result.payouts.some((p: PayoutApprovalState) => p.workflowId === payout.workflowId);
  }, 30_000, 'payouts-awaiting lists the payout (visibility trails)');
  // Nothing reached the provider, not even a read: the caller's request waits on our flow.
  expect([await payoutsPosted(), await payoutsRead(), await charged()]).toEqual([postedBefore, readBefore, chargedBefore]);

  const approved = await runInProcess(stack, ['payout-approve', payout.merOrderNo, '--note', 'called the payee', '--json'], { config: operator('ops-alice', ALICE.privateKey, 'alice@ops') });
  expect(approved.code).toBe(0);
  expect(jsonOf(approved).result).toMatchObject({ workflowId: payout.workflowId, state: 'approved', decidedBy: { keyId: 'ops-alice', sub: 'alice@ops', note: 'called the payee' } });

  const outcome = (await payout.handle.result()) as CallerOutcome<{ merOrderNo: string; arriveAmount: number }>;
  expect(outcome).toMatchObject({ ok: true, result: { merOrderNo: payout.merOrderNo, arriveAmount: 20_000 } });
  expect(await payoutsPosted()).toBe(postedBefore + 1);
  expect(await charged()).toBeGreaterThan(chargedBefore);

  // At or below payoutApprovalAbove a payout is sent at once, as before.
  const small = await startPayout('pay', 5_000);
  expect(await small.handle.result()).toMatchObject({ ok: true, result: { merOrderNo: small.merOrderNo, arriveAmount: 5_000 } });
  expect(await payoutsPosted()).toBe(postedBefore + 2);
});

test('a decision by a service\'s key, by an approver\'s key the workers do not list, by a forged key, or bound to another payout or amount is refused and changes nothing; a rejection ends the payout PayoutNotApproved, nothing sent', async () => {
  const postedBefore = await payoutsPosted();
  const payout = await startPayout('pay', 30_000);
  const state = await awaiting(payout.workflowId);
  const decide = (config: Config) => runInProcess(stack, ['payout-approve', payout.workflowId, '--json'], { config });

  // The workers trust the service's key (it may act on cards) but the caller's payoutApprovers do not name it: refused before anything is recorded.
  const byService = await decide(stack.config);
  expect(byService.code).toBe(1);
  expect(jsonOf(byService).error).toMatchObject({ type: 'Unauthorized', message: expect.stringContaining('"dev" is not among this payout\'s approvers') });
  // An approver whose key the workers no longer list: the worker's check refuses it.
  const byGone = await decide(operator('ops-gone', GONE.privateKey));
  expect(byGone.code).toBe(1);
  expect(jsonOf(byGone).error).toMatchObject({ type: 'Unauthorized', message: expect.stringContaining('capability.keyId "ops-gone" is not on the workers\' allow-list') });
  // Alice's key ID, signed by someone else.
  const forged = await decide(operator('ops-alice', FORGER.privateKey));
  expect(forged.code).toBe(1);
  expect(jsonOf(forged).error).toMatchObject({ type: 'Unauthorized', message: expect.stringContaining('capability.sig does not verify under key "ops-alice"') });

  // Alice's own signature, bound to another amount, or to another payout flow: refused by the flow's validator.
  const alice = new CardActionSigner({ keyId: 'ops-alice', privateKey: ALICE.privateKey });
  const ours = { runId: state.runId, merOrderNo: state.merOrderNo, arriveAmount: state.arriveAmount, arriveCurrency: state.arriveCurrency };
  const handle = stack.client.workflow.getHandle(payout.workflowId);
  await expect(handle.executeUpdate(approvePayoutUpdate, { args: [alice.decidePayout(payout.workflowId, 'approvePayout', { ...ours, arriveAmount: 1 })] })).rejects.toMatchObject({
    cause: { type: 'Unauthorized', message: expect.stringContaining('arriveAmount must be this payout\'s (30000)') },
  });
  await expect(handle.executeUpdate(approvePayoutUpdate, { args: [alice.decidePayout('send-payout/pay_another', 'approvePayout', ours)] })).rejects.toMatchObject({
    cause: { type: 'Unauthorized', message: expect.stringContaining(`capability.workflowId must be this payout's flow (${payout.workflowId})`) },
  });
  // A rejection's capability does not approve.
  const rejection = alice.decidePayout(payout.workflowId, 'rejectPayout', ours);
  await expect(handle.executeUpdate(approvePayoutUpdate, { args: [rejection] })).rejects.toMatchObject({ cause: { type: 'Unauthorized', message: expect.stringContaining('capability.action must be "approvePayout"') } });
  expect(await handle.query(payoutApprovalQuery)).toMatchObject({ state: 'awaiting' });
  expect(await payoutsPosted()).toBe(postedBefore);

  const rejected = await runInProcess(stack, ['payout-reject', payout.workflowId, '--note', 'payee unknown', '--json'], { config: operator('ops-alice', ALICE.privateKey, 'alice@ops') });
  expect(rejected.code).toBe(0);
  expect(jsonOf(rejected).result).toMatchObject({ state: 'rejected', decidedBy: { keyId: 'ops-alice', sub: 'alice@ops', note: 'payee unknown' } });
  expect(await payout.handle.result()).toMatchObject({ ok: false, type: 'PayoutNotApproved', mayHaveTakenEffect: false, message: expect.stringContaining('was rejected by alice@ops (key ops-alice): payee unknown; nothing was sent to the provider') });
  expect(await payoutsPosted()).toBe(postedBefore);
  // Decided: a later approval is refused, and the listing no longer shows it.
  const late = await runInProcess(stack, ['payout-approve', payout.merOrderNo, '--json'], { config: operator('ops-alice', ALICE.privateKey) });
  expect(late.code).toBe(2);
  expect(jsonOf(late).error.type).toBe('UsageError');
});

test('a payout nobody decides in time ends PayoutNotApproved on its durable timer, nothing sent', async () => {
  const [postedBefore, readBefore] = [await payoutsPosted(), await payoutsRead()];
  const payout = await startPayout('pay-short', 20_000);
  expect(await payout.handle.result()).toMatchObject({ ok: false, type: 'PayoutNotApproved', mayHaveTakenEffect: false, message: expect.stringContaining('was not approved within') });
  expect([await payoutsPosted(), await payoutsRead()]).toEqual([postedBefore, readBefore]);
  const described = await stack.client.workflow.getHandle(payout.workflowId).describe();
  expect(described.status.name).toBe('FAILED');
  expect(described.searchAttributes.ProviderStatus).toEqual(['NOT_APPROVED']);
});
