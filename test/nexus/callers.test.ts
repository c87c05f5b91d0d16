/**
 * Teams in other namespaces call our Nexus service `cardIssuing` (issue 43, docs/nexus.md): a
 * TypeScript caller (examples/nexus-caller-ts) and a Go caller (examples/nexus-caller-go, built
 * here with `go build`), workers in the namespace of team A on the dev server, through team A's
 * endpoint made by our CLI; team B calls from a namespace of its own through its own endpoint
 * (NEXUS_CALLERS: one endpoint, queue and handler per caller). The sandbox's ledger is the truth: a
 * repeated call, and one retried after the caller's worker was killed, move money once; a failure
 * arrives typed; a cancelled caller leaves our flow running to its outcome, which the same key then
 * answers. And one caller reaches nothing of another's (issue 50): not an operation it is not
 * allowed, not another's run under the same key, card or cardholder, not an eSIM's QR code, not a
 * payout above its limit.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { CardIssuingClient } from '../../src/client';
import { relayWorkflowId } from '../../src/nexus/handler';
import { relayToken } from '../../src/nexus/relay-token';
import { NEXUS_OPERATIONS, type NexusOperationName } from '../../src/client/nexus-contract';
import { nexusCallerQueue } from '../../src/shared/task-queues';
import { FAST_TIMINGS, startStack, temporalAddress, uniqueId, type Stack } from '../helpers/stack';
import { fixtureBins } from '../helpers/provider';
import { jsonOf, runChild, runInProcess } from '../starter/cli-helpers';
import { waitUntil } from '../helpers/wait';
import type { CallerOutcome } from '../../examples/nexus-caller-ts/workflows';

jest.setTimeout(240_000);

const GO_CALLER_DIR = resolve(__dirname, '../../examples/nexus-caller-go');
const TS_CALLER = require.resolve('../../examples/nexus-caller-ts/workflows');

let stack: Stack;
let ours: CardIssuingClient;
/** Team A's endpoint (the TypeScript and Go callers'), and team B's. */
let endpoint: string;
let endpointB: string;
let callerNamespace: string;
let callerNamespaceB: string;
let callerConnection: Connection;
let caller: Client;
let callerB: Client;
let nativeConnection: NativeConnection;
let callerBundle: string;
let plainBin: string;
let kycBin: string;
let goBinary: string | undefined;
let buildDir: string;

/** Team A may call everything, and pay out at most 500.00; team B everything but sendPayout and walletBalance. */
const TEAM_A = { name: 'team-a', operations: NEXUS_OPERATIONS, payoutLimit: 50_000 };
const TEAM_B = { name: 'team-b', operations: NEXUS_OPERATIONS.filter((op) => op !== 'sendPayout' && op !== 'walletBalance') };
/** A key as our client holds it for team A (`team-a_<key>`). */
const scopedA = (key: string) => `${TEAM_A.name}_${key}`;

/** Skipped Go parts say so once (the machine has no Go toolchain). */
const goSkipped = () => goBinary === undefined;

let nexusCallersEnv: string;
let endpointBase: string;

beforeAll(async () => {
  callerNamespace = `caller-${randomUUID().slice(0, 8)}`;
  callerNamespaceB = `caller-b-${randomUUID().slice(0, 8)}`;
  nexusCallersEnv = JSON.stringify([
    { ...TEAM_A, namespace: callerNamespace },
    { ...TEAM_B, namespace: callerNamespaceB },
  ]);
  [stack, callerBundle] = await Promise.all([
    startStack({ cardProvisioningMs: 50 }, { NEXUS_CALLERS: nexusCallersEnv }),
    // The callers' workflows, bundled once for every caller worker below.
    bundleWorkflowCode({ workflowsPath: TS_CALLER, logger: { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (m: string) => process.stderr.write(`${m}\n`), log: () => undefined } }).then((b) => b.code),
  ]);
  ours = new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing });
  const bins = await fixtureBins(stack);
  plainBin = bins.plain.cardBinId;
  kycBin = bins.kyc.cardBinId;
  callerConnection = await Connection.connect({ address: temporalAddress() });
  for (const namespace of [callerNamespace, callerNamespaceB]) {
    await callerConnection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    await waitUntil(async () => callerConnection.workflowService.describeNamespace({ namespace }).then(() => true, () => false), 20_000, `the caller namespace ${namespace} registered`);
  }
  // The callers' clients: no codec of ours, nothing of our namespace.
  caller = new Client({ connection: callerConnection, namespace: callerNamespace });
  callerB = new Client({ connection: callerConnection, namespace: callerNamespaceB });
  nativeConnection = await NativeConnection.connect({ address: temporalAddress() });

  // One endpoint per caller: <base>-team-a to team A's queue, <base>-team-b to team B's.
  const base = (endpointBase = `card-issuing-${randomUUID().slice(0, 8)}`);
  endpoint = `${base}-team-a`;
  endpointB = `${base}-team-b`;
  const made = await runInProcess(stack, ['nexus-endpoint', '--name', base, '--json']);
  expect(made.code).toBe(0);
  expect(jsonOf(made).result.endpoints).toEqual([
    { name: endpoint, namespace: stack.config.temporal.namespace, taskQueue: `${stack.taskQueue}-nexus-team-a`, caller: 'team-a', callerNamespace, outcome: 'created' },
    { name: endpointB, namespace: stack.config.temporal.namespace, taskQueue: `${stack.taskQueue}-nexus-team-b`, caller: 'team-b', callerNamespace: callerNamespaceB, outcome: 'created' },
  ]);
  const again = await runInProcess(stack, ['nexus-endpoint', '--name', base, '--json']);
  expect(jsonOf(again).result.endpoints.map((e: { outcome: string }) => e.outcome)).toEqual(['kept', 'kept']);
  // Endpoints are cluster-wide: another deployment's (another task queue) does not take these over by accident, nor make any of them.
  const elsewhere = { ...stack.config, temporal: { ...stack.config.temporal, taskQueue: `${stack.taskQueue}-other` } };
  const taken = await runInProcess(stack, ['nexus-endpoint', '--name', base, '--json'], { config: elsewhere });
  expect(taken.code).toBe(1);
  expect(jsonOf(taken)).toMatchObject({ ok: false, error: { type: 'NexusEndpointTaken', message: expect.stringContaining(`task queue ${stack.taskQueue}-nexus-team-a`) } });
  const endpointTargets = await Promise.all([endpoint, endpointB].map(async (name) => (await callerConnection.operatorService.listNexusEndpoints({ name })).endpoints?.[0]?.spec?.target?.worker?.taskQueue));
  expect(endpointTargets).toEqual([`${stack.taskQueue}-nexus-team-a`, `${stack.taskQueue}-nexus-team-b`]);

  buildDir = mkdtempSync(join(tmpdir(), 'nexus-caller-go-'));
  try {
    execFileSync('go', ['build', '-o', join(buildDir, 'nexus-caller'), '.'], { cwd: GO_CALLER_DIR, stdio: 'pipe', env: { ...process.env, GOFLAGS: '-mod=mod' } });
    goBinary = join(buildDir, 'nexus-caller');
  } catch (err) {
    process.stderr.write(`skipped: the Go caller (go build in examples/nexus-caller-go failed or no Go toolchain: ${(err as Error).message.split('\n')[0]})\n`);
  }
});

afterAll(async () => {
  await nativeConnection?.close();
  await callerConnection?.close();
  await stack?.close();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

/** A TypeScript caller worker in team A's namespace (or `namespace`), until `fn` is done. */
async function withTsCaller<T>(taskQueue: string, fn: () => Promise<T>, namespace = callerNamespace): Promise<T> {
  const worker = await Worker.create({ connection: nativeConnection, namespace, taskQueue, workflowBundle: { code: callerBundle } });
  return worker.runUntil(fn());
}

/** The Go caller's worker process (killed with SIGKILL by `kill`). */
function startGoCaller(taskQueue: string): ChildProcess {
  const child = spawn(goBinary!, ['-address', temporalAddress(), '-namespace', callerNamespace, '-task-queue', taskQueue], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', () => undefined);
  return child;
}

async function stopGoCaller(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

const run = <T>(workflowType: string, taskQueue: string, args: unknown[], from: Client = caller) =>
  from.workflow.execute<(...a: unknown[]) => Promise<CallerOutcome<T>>>(workflowType, { taskQueue, workflowId: uniqueId(`caller-${workflowType}`), args });

/** One operation through team A's endpoint (`team: 'b'`: team B's, from its namespace), with a caller worker of that team running meanwhile. */
async function call<T = any>(operation: NexusOperationName, input: unknown, team: 'a' | 'b' = 'a'): Promise<CallerOutcome<T>> {
  const [namespace, client, target] = team === 'a' ? [callerNamespace, caller, endpoint] : [callerNamespaceB, callerB, endpointB];
  const queue = `ts-${team}-${operation}`;
  return withTsCaller(queue, () => run<T>('operationThroughNexus', queue, [target, operation, input], client), namespace);
}

/** A card team A issued through its endpoint (a caller funds, withdraws from and reads only its own). */
async function newCard(initialAmount = 1000): Promise<string> {
  const issued = await call<{ cardId: string }>('issueCard', { idempotencyKey: uniqueId('nexus-card'), cardBinId: plainBin, initialAmount, firstName: 'Ada', lastName: 'Lovelace', timings: FAST_TIMINGS });
  if (!issued.ok) throw new Error(`team A's card was not issued: ${issued.type} ${issued.message}`);
  return issued.result.cardId;
}

const balance = async (cardId: string) => (await stack.control<{ cards: Array<{ cardId: string; availableBalance: number }> }>('GET', '/ledger')).cards.find((c) => c.cardId === cardId)?.availableBalance;
const cardCount = async () => (await stack.control<{ cards: unknown[] }>('GET', '/ledger')).cards.length;

test('the same fundCard from a TypeScript and a Go caller, repeated, moves the money once and answers the same movement', async () => {
  const cardId = await newCard(1000);
  const request = { cardId, amount: 700, idempotencyKey: uniqueId('nexus-fund') };
  const [first, second] = await withTsCaller('ts-fund', () => Promise.all([run<any>('fundCardThroughNexus', 'ts-fund', [endpoint, request]), run<any>('fundCardThroughNexus', 'ts-fund', [endpoint, request])]));
  // The key as our flows hold it: scoped to the caller.
  expect(first).toMatchObject({ ok: true, result: { cardId, amount: 700, idempotencyKey: scopedA(request.idempotencyKey) } });
  expect(second).toEqual(first);
  if (!goSkipped()) {
    const go = startGoCaller('go-fund');
    try {
      const fromGo = await run<any>('FundCardThroughNexus', 'go-fund', [endpoint, request]);
      expect(fromGo).toMatchObject({ ok: true, result: { updateId: (first as { result: { updateId: string } }).result.updateId } });
    } finally {
      await stopGoCaller(go);
    }
  }
  expect(await balance(cardId)).toBe(1700);
});

test('a failure arrives typed on the caller\'s side: a key reused for another amount is IdempotencyConflict, an amount below the minimum or a PIN in clear ValidationFailed, nothing moved', async () => {
  const cardId = await newCard(1000);
  const key = uniqueId('nexus-conflict');
  await withTsCaller('ts-fail', async () => {
    expect(await run('fundCardThroughNexus', 'ts-fail', [endpoint, { cardId, amount: 300, idempotencyKey: key }])).toMatchObject({ ok: true });
    expect(await run('fundCardThroughNexus', 'ts-fail', [endpoint, { cardId, amount: 400, idempotencyKey: key }])).toMatchObject({ ok: false, type: 'IdempotencyConflict', mayHaveTakenEffect: false });
    expect(await run('fundCardThroughNexus', 'ts-fail', [endpoint, { cardId, amount: 50, idempotencyKey: uniqueId('nexus-small') }])).toMatchObject({ ok: false, type: 'ValidationFailed', mayHaveTakenEffect: false });
    // A PIN never crosses in clear: refused before anything starts.
    await expect(run('issueCardThroughNexus', 'ts-fail', [endpoint, { idempotencyKey: uniqueId('nexus-pin'), cardBinId: plainBin, initialAmount: 500, firstName: 'Ada', lastName: 'Lovelace', pin: '1234' }])).rejects.toMatchObject({
      cause: { cause: { cause: { type: 'ValidationFailed', message: expect.stringContaining('pin is not taken over Nexus') } } },
    });
  });
  if (!goSkipped()) {
    const go = startGoCaller('go-fail');
    try {
      expect(await run('FundCardThroughNexus', 'go-fail', [endpoint, { cardId, amount: 400, idempotencyKey: key }])).toMatchObject({ ok: false, type: 'IdempotencyConflict', mayHaveTakenEffect: false });
    } finally {
      await stopGoCaller(go);
    }
  }
  expect(await balance(cardId)).toBe(1300);
});

test('an issueCard still running past the Nexus request is asked again and joins the same flow; a caller worker killed meanwhile and replaced ends with one card', async () => {
  // The card takes 10 s to provision: the first Nexus request (8 s at most) answers "still running" and is retried.
  await stack.control('PUT', '/config', { cardProvisioningMs: 10_000 });
  try {
    const before = await cardCount();
    const tsKey = uniqueId('nexus-issue-ts');
    const request = (idempotencyKey: string) => ({ idempotencyKey, cardBinId: plainBin, initialAmount: 1200, firstName: 'Grace', lastName: 'Hopper', timings: FAST_TIMINGS });
    // TypeScript: the caller's worker stops mid-operation; another takes its workflow over.
    const tsRun = await caller.workflow.start('issueCardThroughNexus', { taskQueue: 'ts-issue', workflowId: uniqueId('caller-issue'), args: [endpoint, request(tsKey)] });
    await withTsCaller('ts-issue', () => waitUntil(async () => scheduled(tsRun.workflowId), 30_000, 'the TS caller scheduled its operation'));
    // The first request answered "still running"; the caller's server asks again (and the retry joins the flow: one card below).
    await waitUntil(async () => /UPSTREAM_TIMEOUT\): still running/.test((await lastAttemptFailure(tsRun.workflowId)) ?? ''), 30_000, 'an attempt answered still running');
    const fromTs = (await withTsCaller('ts-issue', () => tsRun.result())) as CallerOutcome<{ cardId: string }>;
    expect(fromTs).toMatchObject({ ok: true, result: { availableBalance: 1200 } });

    if (!goSkipped()) {
      const goKey = uniqueId('nexus-issue-go');
      let go = startGoCaller('go-issue');
      const goRun = await caller.workflow.start('IssueCardThroughNexus', { taskQueue: 'go-issue', workflowId: uniqueId('caller-issue-go'), args: [endpoint, request(goKey)] });
      await waitUntil(async () => scheduled(goRun.workflowId), 30_000, 'the Go caller scheduled its operation');
      await stopGoCaller(go, 'SIGKILL');
      go = startGoCaller('go-issue');
      try {
        expect(await goRun.result()).toMatchObject({ ok: true, result: { availableBalance: 1200 } });
      } finally {
        await stopGoCaller(go);
      }
    }
    expect(await cardCount()).toBe(before + (goSkipped() ? 1 : 2));
  } finally {
    await stack.control('PUT', '/config', { cardProvisioningMs: 50 });
  }
});

test('cancelling the caller\'s issueCard does not cancel ours: TRY_CANCEL stops the caller at once, the default waits and answers the card; our flow ends with one card, which the same key answers', async () => {
  await stack.control('PUT', '/config', { cardProvisioningMs: 5_000 });
  try {
    const before = await cardCount();
    const key = uniqueId('nexus-cancel');
    const request = { idempotencyKey: key, cardBinId: plainBin, initialAmount: 900, firstName: 'Grace', lastName: 'Hopper', timings: FAST_TIMINGS };
    const [cancelled, waited] = await withTsCaller('ts-cancel', () =>
      Promise.all([run('issueCardThenCancel', 'ts-cancel', [endpoint, request, 2000, 'TRY_CANCEL']), run<{ cardId: string }>('issueCardThenCancel', 'ts-cancel', [endpoint, request, 2000, 'WAIT_CANCELLATION_COMPLETED'])]),
    );
    expect(cancelled).toMatchObject({ ok: false, cancelled: true });
    // Ours runs on: the flow under the key ends with the card, which the caller that waited was answered.
    const card = await ours.flow<{ cardId: string }>(`issue-card/${scopedA(key)}`).result();
    expect(waited).toMatchObject({ ok: true, result: { cardId: card.cardId } });
    await stack.control('PUT', '/config', { cardProvisioningMs: 50 });
    const again = await withTsCaller('ts-cancel', () => run<{ cardId: string }>('issueCardThroughNexus', 'ts-cancel', [endpoint, request]));
    expect(again).toMatchObject({ ok: true, result: { cardId: card.cardId } });
    expect(await cardCount()).toBe(before + 1);
  } finally {
    await stack.control('PUT', '/config', { cardProvisioningMs: 50 });
  }
});

test('a hosted onboarding over Nexus: its page is read through `onboarding` before the review ends, then the review\'s outcome; the form (our store\'s documents) is refused ValidationFailed naming mode', async () => {
  await stack.control('PUT', '/config', { kycReviewMs: 3000 });
  try {
    const request = { mode: 'hosted', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', timings: FAST_TIMINGS, idempotencyKey: uniqueId('nexus-kyc').slice(0, 40) };
    const hosted = await withTsCaller('ts-kyc', () => caller.workflow.execute('onboardHostedThroughNexus', { taskQueue: 'ts-kyc', workflowId: uniqueId('caller-kyc'), args: [endpoint, request] }));
    const progress = await ours.onboarding(`onboard-cardholder/${scopedA(request.idempotencyKey)}`);
    expect(hosted).toEqual({ verificationUrl: progress.verificationUrl, outcome: { ok: true, result: expect.objectContaining({ id: progress.cardholderId, kycStatus: 'APPROVED' }) } });
    expect(progress.verificationUrl).toEqual(expect.stringContaining(progress.cardholderId!));

    const form = { ...request, mode: 'form', idempotencyKey: uniqueId('nexus-form').slice(0, 40), documents: { idFront: { name: 'someone-else/passport.png', contentType: 'image/png' }, attachments: [] } };
    const refused = await withTsCaller('ts-kyc', () => caller.workflow.execute('onboardHostedThroughNexus', { taskQueue: 'ts-kyc', workflowId: uniqueId('caller-kyc'), args: [endpoint, form] }));
    expect(refused.outcome).toMatchObject({ ok: false, type: 'ValidationFailed', message: expect.stringContaining('mode must be "hosted" over Nexus') });
  } finally {
    await stack.control('PUT', '/config', { kycReviewMs: 500 });
  }
});

test('cancelling the caller\'s hosted onboarding cancels ours once its cardholder is recorded; the same key later waits for that cardholder\'s review and submits nothing again', async () => {
  // The review waits for the sandbox's decision (below), so the onboarding is still waiting when the caller cancels.
  await stack.control('PUT', '/config', { kycReviewMs: 600_000 });
  try {
    const submissions = async () => ((await stack.control('GET', '/stats')).endpoints.startHostedKyc?.requests ?? 0) as number;
    const sentBefore = await submissions();
    const request = { mode: 'hosted', firstName: 'Ada', lastName: 'Byron', email: 'ada.byron@example.com', timings: FAST_TIMINGS, idempotencyKey: uniqueId('nexus-kyc-cancel').slice(0, 40) };
    const workflowId = `onboard-cardholder/${scopedA(request.idempotencyKey)}`;
    const cancelled = await withTsCaller('ts-kyc', () => caller.workflow.execute('onboardHostedThroughNexus', { taskQueue: 'ts-kyc', workflowId: uniqueId('caller-kyc'), args: [endpoint, request, true] }));
    expect(cancelled).toMatchObject({ verificationUrl: expect.any(String), outcome: { ok: false, cancelled: true } });
    // The caller was told once ours ended: our onboarding and its relay are cancelled.
    const { status, runId } = await ours.status(workflowId);
    expect(status).toBe('CANCELLED');
    expect((await stack.client.workflow.getHandle(relayWorkflowId(workflowId, runId)).describe()).status.name).toBe('CANCELLED');
    const { cardholderId } = await ours.onboarding(workflowId);
    expect(cardholderId).toEqual(expect.any(String));

    // The same key again: a new run waits for the recorded cardholder's review (decided now) and sends no second submission.
    const again = withTsCaller('ts-kyc', () => caller.workflow.execute('onboardHostedThroughNexus', { taskQueue: 'ts-kyc', workflowId: uniqueId('caller-kyc'), args: [endpoint, request] }));
    await waitUntil(async () => (await ours.status(workflowId)).status === 'RUNNING', 30_000, 'the onboarding restarted under the key');
    await stack.control('POST', `/kyc/${cardholderId}/decision`, { kycStatus: 'APPROVED' });
    expect((await again).outcome).toEqual({ ok: true, result: expect.objectContaining({ id: cardholderId, kycStatus: 'APPROVED' }) });
    expect((await submissions()) - sentBefore).toBe(1);
  } finally {
    await stack.control('PUT', '/config', { kycReviewMs: 500 });
  }
});

test('the Nexus worker, which reads plain JSON, runs the onboarding relay and no other workflow: a money flow started on its queue in clear never runs', async () => {
  const plain = new Client({ connection: stack.client.connection, namespace: stack.config.temporal.namespace });
  const card = await ours.issueCard({ idempotencyKey: uniqueId('nexus-plain'), cardBinId: plainBin, initialAmount: 900, firstName: 'Mallory', lastName: 'Plain', timings: FAST_TIMINGS });
  const wallet = async () => (await stack.control('GET', '/wallet')).availableBalance as number;
  const before = await wallet();
  const handle = await plain.workflow.start('fundCard', { taskQueue: nexusCallerQueue(stack.taskQueue, TEAM_A.name), workflowId: uniqueId('nexus-plain-fund'), args: [{ cardId: card.cardId, amount: 500, timings: FAST_TIMINGS }] });
  try {
    await waitUntil(async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      return events.some((e) => /fundCard/.test(e.workflowTaskFailedEventAttributes?.failure?.message ?? ''));
    }, 30_000, 'the workflow task refused');
    const { events } = await handle.fetchHistory();
    expect((events ?? []).filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
    expect(await wallet()).toBe(before);
  } finally {
    await handle.terminate('test done');
  }
});

test('a relay started in clear by hand reads nothing: without our handler\'s signature it is refused, and even signed it reads only the onboarding under its key, of its queue\'s caller', async () => {
  const plain = new Client({ connection: stack.client.connection, namespace: stack.config.temporal.namespace });
  const relay = async (input: Record<string, unknown>, team = TEAM_A.name) =>
    plain.workflow.execute('onboardingRelay', { taskQueue: nexusCallerQueue(stack.taskQueue, team), workflowId: uniqueId('relay-probe'), args: [input] }).then(
      (result: unknown) => ({ result }),
      (err: Error & { cause?: Error & { type?: string; details?: unknown[] } }) => ({ failure: err.cause }),
    );
  // A real onboarding of team A's, ended: anyone may list its ID and run.
  const idempotencyKey = scopedA(uniqueId('nexus-relay-probe').slice(0, 40));
  const onboarded = await ours.startOnboardCardholder({ mode: 'hosted', firstName: 'Eve', lastName: 'Probe', email: 'eve@example.com', timings: FAST_TIMINGS, idempotencyKey });
  await onboarded.result();
  for (const token of [undefined, 'test.forged', relayToken({ keyId: 'test', key: Buffer.alloc(32, 1).toString('base64') }, idempotencyKey, onboarded.runId)]) {
    const refused = await relay({ idempotencyKey, runId: onboarded.runId, token });
    expect(refused).toMatchObject({ failure: { type: 'ValidationFailed' } });
  }
  // Signed with our key, but on team B's queue: its relays follow only team B's onboardings.
  const otherCallers = await relay({ idempotencyKey, runId: onboarded.runId, token: relayToken(stack.config.codec, idempotencyKey, onboarded.runId) }, TEAM_B.name);
  expect(otherCallers).toMatchObject({ failure: { type: 'ValidationFailed' } });
  // Signed with our key (this test holds it), but pointed at a payout's run: only onboard-cardholder/<key> is read.
  const payout = await ours.startSendPayout({ idempotencyKey: scopedA(uniqueId('nexus-relay-probe').slice(0, 40)), merOrderNo: uniqueId('po').slice(0, 40), paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 5000, payeeFirstName: 'Eve', payeeLastName: 'Probe', payeeAccountNo: 'GB29NWBK60161331926819', timings: FAST_TIMINGS });
  const payoutKey = payout.workflowId.split('/').slice(1).join('/');
  const elsewhere = await relay({ idempotencyKey: payoutKey, runId: payout.runId, token: relayToken(stack.config.codec, payoutKey, payout.runId) });
  expect(elsewhere).toMatchObject({ failure: { type: 'FlowNotFound' } });
  expect(JSON.stringify(elsewhere)).not.toMatch(/Eve|Probe|GB29/);
});

test('a relay cancelled just after the onboarding completed answers the outcome (the cancellation came too late to take)', async () => {
  await stack.control('PUT', '/config', { kycReviewMs: 600_000 });
  try {
    const plain = new Client({ connection: stack.client.connection, namespace: stack.config.temporal.namespace });
    const idempotencyKey = scopedA(uniqueId('nexus-late-cancel').slice(0, 40));
    const onboarding = await ours.startOnboardCardholder({ mode: 'hosted', firstName: 'Late', lastName: 'Cancel', email: 'late@example.com', timings: FAST_TIMINGS, idempotencyKey });
    const relay = await plain.workflow.start('onboardingRelay', {
      taskQueue: nexusCallerQueue(stack.taskQueue, TEAM_A.name),
      workflowId: relayWorkflowId(onboarding.workflowId, onboarding.runId),
      args: [{ idempotencyKey, runId: onboarding.runId, token: relayToken(stack.config.codec, idempotencyKey, onboarding.runId) }],
    });
    // Between two of the relay's looks (they are seconds apart by then): the review ends, then the caller cancels.
    const looks = async () => ((await relay.fetchHistory()).events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).length;
    await waitUntil(async () => (await looks()) >= 3, 30_000, 'three looks');
    const { cardholderId } = await ours.onboarding(onboarding.workflowId);
    await stack.control('POST', `/kyc/${cardholderId}/decision`, { kycStatus: 'APPROVED' });
    await onboarding.result();
    await relay.cancel();
    expect(await relay.result()).toMatchObject({ id: cardholderId, kycStatus: 'APPROVED' });
  } finally {
    await stack.control('PUT', '/config', { kycReviewMs: 500 });
  }
});

test('nexus-endpoint needs no payload key outside development (it sends no payload), but callers: without NEXUS_CALLERS it makes none; a command that does still refuses to run without one', async () => {
  const production = { CARD_ISSUING_DEVELOPMENT: undefined, PAYLOAD_CODEC_KEY: undefined, PAYLOAD_CODEC_PREVIOUS_KEYS: undefined, NEXUS_CALLERS: nexusCallersEnv };
  const kept = await runChild(stack, ['nexus-endpoint', '--name', endpointBase, '--json'], { env: production });
  expect(kept.code === 0 ? jsonOf(kept).result.endpoints.map((e: { outcome: string }) => e.outcome) : `exit ${kept.code}: ${kept.stderr}`).toEqual(['kept', 'kept']);
  // Outside development no caller is configured by default: no endpoint (and no Nexus worker) without NEXUS_CALLERS.
  const none = await runChild(stack, ['nexus-endpoint', '--name', endpointBase, '--json'], { env: { ...production, NEXUS_CALLERS: undefined } });
  expect(none.code).toBe(2);
  expect(jsonOf(none)).toMatchObject({ ok: false, error: { type: 'UsageError', message: expect.stringContaining('NEXUS_CALLERS names no caller') } });
  const refused = await runChild(stack, ['wallet', '--json'], { env: production });
  expect(refused.code).toBe(2);
  expect(refused.stdout + refused.stderr).toMatch(/PAYLOAD_CODEC_KEY must be set/);
});

// --- One caller reaches nothing of another's (issue 50; docs/nexus.md, "Who can call") ---------------

const payoutRequests = async () => ((await stack.control('GET', '/stats')).endpoints.createPayout?.requests ?? 0) as number;
const charged = async () => (await stack.control<{ totals: Record<string, number> }>('GET', '/ledger')).totals.charged;
const payoutRequest = (arriveAmount: number) => ({
  idempotencyKey: uniqueId('nexus-payout').slice(0, 40),
  merOrderNo: uniqueId('po').slice(0, 30),
  paymentType: 'BANK_TRANSFER',
  arriveCurrency: 'EUR',
  arriveAmount,
  payeeFirstName: 'Bo',
  payeeLastName: 'Payee',
  payeeAccountNo: 'GB29NWBK60161331926819',
  timings: FAST_TIMINGS,
});

test('an operation the caller is not allowed is refused NotAllowed before anything starts: no flow, nothing sent', async () => {
  const [sentBefore, chargedBefore] = [await payoutRequests(), await charged()];
  const request = payoutRequest(5000);
  const refused = await call('sendPayout', request, 'b');
  expect(refused).toMatchObject({ ok: false, type: 'NotAllowed', mayHaveTakenEffect: false, message: expect.stringContaining('caller team-b is not allowed sendPayout') });
  expect(await call('walletBalance', undefined, 'b')).toMatchObject({ ok: false, type: 'NotAllowed', message: expect.stringContaining('not allowed walletBalance') });
  await expect(ours.status(`send-payout/team-b_${request.idempotencyKey}`)).rejects.toThrow(WorkflowNotFoundError);
  expect([await payoutRequests(), await charged()]).toEqual([sentBefore, chargedBefore]);
});

test('a sendPayout above the caller\'s payoutLimit is refused NotAllowed naming the limit, nothing sent; at the limit it is paid, its merOrderNo scoped to the caller', async () => {
  const sentBefore = await payoutRequests();
  const above = payoutRequest(TEAM_A.payoutLimit + 1);
  const refused = await call('sendPayout', above);
  expect(refused).toMatchObject({ ok: false, type: 'NotAllowed', mayHaveTakenEffect: false, message: expect.stringContaining(`arriveAmount ${TEAM_A.payoutLimit + 1} is above caller team-a's payoutLimit ${TEAM_A.payoutLimit}`) });
  await expect(ours.status(`send-payout/${scopedA(above.idempotencyKey)}`)).rejects.toThrow(WorkflowNotFoundError);
  expect(await payoutRequests()).toBe(sentBefore);

  const atLimit = payoutRequest(TEAM_A.payoutLimit);
  const paid = await call('sendPayout', atLimit);
  expect(paid).toMatchObject({ ok: true, result: { merOrderNo: scopedA(atLimit.merOrderNo), arriveAmount: TEAM_A.payoutLimit } });
  expect(await payoutRequests()).toBe(sentBefore + 1);
});

test('the same key from two callers is two requests: team B\'s purchaseEsim under team A\'s key orders and is charged on its own; neither answer carries the QR code, which a service in our namespace redeems by reference', async () => {
  const key = uniqueId('nexus-esim').slice(0, 40);
  const chargedBefore = await charged();
  const request = { planNo: 'epln_global_1gb', idempotencyKey: key, timings: FAST_TIMINGS };
  const a = await call('purchaseEsim', request);
  const b = await call('purchaseEsim', request, 'b');
  expect(a).toMatchObject({ ok: true, result: { status: 'ISSUED', qrCodeRef: { workflowId: `purchase-esim/team-a_${key}` } } });
  expect(b).toMatchObject({ ok: true, result: { status: 'ISSUED', qrCodeRef: { workflowId: `purchase-esim/team-b_${key}` } } });
  if (!a.ok || !b.ok) return;
  expect(a.result.qrCodeRef.orderNo).toBe(a.result.orderNo);
  // Two orders, two charges: B joined nothing of A's and was answered nothing of it.
  expect(b.result.orderNo).not.toBe(a.result.orderNo);
  expect((await charged()) - chargedBefore).toBe(a.result.amount + b.result.amount);
  expect(JSON.stringify(b)).not.toContain(a.result.orderNo);
  for (const answer of [a.result, b.result]) expect(answer).not.toHaveProperty('qrCode');
  // Redeemed in our namespace through the client: the code the flow holds, which crossed in neither answer.
  const placed = await ours.flow<{ qrCode: string }>(`purchase-esim/team-a_${key}`).result();
  const redeemed = await ours.esimQrCode(a.result.qrCodeRef);
  expect(redeemed).toMatchObject({ orderNo: a.result.orderNo, qrCode: placed.qrCode });
  expect(placed.qrCode).toEqual(expect.stringMatching(/^LPA:/));
  expect(JSON.stringify([a, b])).not.toContain(placed.qrCode);
  // A reference holds for its own order only.
  await expect(ours.esimQrCode({ orderNo: b.result.orderNo, workflowId: a.result.qrCodeRef.workflowId })).rejects.toMatchObject({ type: 'ValidationFailed' });
});

test('a rechargeEsim whose outcome is unknown, repeated under its key (as the server retries a request), answers the same OutcomeUnknown from run 1\'s open item: mayHaveTakenEffect true, no second run, one charge', async () => {
  const bought = await call<{ esimNo: string }>('purchaseEsim', { planNo: 'epln_global_1gb', idempotencyKey: uniqueId('nexus-esim').slice(0, 40), timings: FAST_TIMINGS });
  if (!bought.ok) throw new Error(`no eSIM to recharge: ${bought.type} ${bought.message}`);
  const key = uniqueId('nexus-rc').slice(0, 40);
  const workflowId = `recharge-esim/${bought.result.esimNo}/${scopedA(key)}`;
  const rechargeRequests = async () => ((await stack.control('GET', '/stats')).endpoints.rechargeEsim?.requests ?? 0) as number;
  const [sentBefore, chargedBefore] = [await rechargeRequests(), await charged()];
  // Charged, and its answer lost; the spec gives the endpoint no key, so our flow never posts it again.
  const lost = { ignoreIdempotencyKey: true, errorRate: 1, afterEffect: true };
  await stack.control('PUT', '/config', { faults: { endpoints: { 'POST /esim/recharge': lost } } });
  try {
    const request = { esimNo: bought.result.esimNo, idempotencyKey: key, timings: FAST_TIMINGS };
    const first = await call('rechargeEsim', request);
    const again = await call('rechargeEsim', request);
    const runs: string[] = [];
    for await (const run of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(run.runId);
    expect(runs).toHaveLength(1);
    const named = expect.stringContaining(`open item open-item/${workflowId}/${runs[0]}`);
    expect(first).toMatchObject({ ok: false, type: 'OutcomeUnknown', mayHaveTakenEffect: true, message: named });
    expect(again).toMatchObject({ ok: false, type: 'OutcomeUnknown', mayHaveTakenEffect: true, message: named });
    expect(await rechargeRequests()).toBe(sentBefore + 1);
    expect(await charged()).toBeGreaterThan(chargedBefore);
  } finally {
    await stack.control('PUT', '/config', { faults: { endpoints: { 'POST /esim/recharge': { ignoreIdempotencyKey: false, errorRate: 0, afterEffect: false } } } });
  }
});

test('a caller reads and moves money only on cards it issued through its endpoint: team B\'s cardState and withdrawFromCard on team A\'s card are refused NotAllowed naming the card, its balance unchanged', async () => {
  const cardId = await newCard(1000);
  const state = await call('cardState', { cardId }, 'b');
  expect(state).toMatchObject({ ok: false, type: 'NotAllowed', mayHaveTakenEffect: false, message: expect.stringContaining(`card ${cardId} was not issued by caller team-b`) });
  expect(JSON.stringify(state)).not.toMatch(/Lovelace|team-a|availableBalance/);
  const withdrawn = await call('withdrawFromCard', { cardId, amount: 300, idempotencyKey: uniqueId('nexus-b-withdraw') }, 'b');
  expect(withdrawn).toMatchObject({ ok: false, type: 'NotAllowed', message: expect.stringContaining(`card ${cardId} was not issued by caller team-b`) });
  expect(await balance(cardId)).toBe(1000);
  // A card no caller issued over Nexus (ours, through the client) is refused alike, to team A too.
  const notOverNexus = (await ours.issueCard({ idempotencyKey: uniqueId('nexus-ours'), cardBinId: plainBin, initialAmount: 500, firstName: 'Ada', lastName: 'Lovelace', timings: FAST_TIMINGS })).cardId;
  expect(await call('cardState', { cardId: notOverNexus })).toMatchObject({ ok: false, type: 'NotAllowed', message: expect.stringContaining(`card ${notOverNexus} was not issued by caller team-a`) });
  // Team A reads its own.
  expect(await call('cardState', { cardId })).toMatchObject({ ok: true, result: { card: { cardId, availableBalance: 1000 } } });
});

test('a caller issues cards only on cardholders it onboarded: team B naming team A\'s cardholder and onboarding key is refused NotAllowed, no card made, and reads nothing of that onboarding; team A issues on its own', async () => {
  const onboardingKey = uniqueId('nexus-kyc-a').slice(0, 40);
  const onboarding = { mode: 'hosted', firstName: 'Mei', lastName: 'Tanaka', email: 'mei@example.com', timings: FAST_TIMINGS, idempotencyKey: onboardingKey };
  const onboarded = await withTsCaller('ts-kyc', () => caller.workflow.execute('onboardHostedThroughNexus', { taskQueue: 'ts-kyc', workflowId: uniqueId('caller-kyc'), args: [endpoint, onboarding] }));
  expect(onboarded.outcome).toMatchObject({ ok: true, result: { kycStatus: 'APPROVED' } });
  const cardholderId = (onboarded.outcome as { result: { id: string } }).result.id;
  const before = await cardCount();
  const issue = (idempotencyKey: string) => ({ idempotencyKey, cardBinId: kycBin, initialAmount: 500, cardholderId, onboardingKey, timings: FAST_TIMINGS });

  const refused = await call('issueCard', issue(uniqueId('nexus-b-issue')), 'b');
  expect(refused).toMatchObject({ ok: false, type: 'NotAllowed', mayHaveTakenEffect: false, message: expect.stringContaining(`cardholder ${cardholderId} was not onboarded by caller team-b`) });
  const { onboardingKey: _unnamed, ...unnamed } = issue(uniqueId('nexus-b-issue'));
  expect(await call('issueCard', unnamed, 'b')).toMatchObject({ ok: false, type: 'ValidationFailed', message: expect.stringContaining('onboardingKey is required with cardholderId') });
  // Team B's `onboarding` under team A's key is its own key's: none (not A's page).
  expect(await call('onboarding', { idempotencyKey: onboardingKey }, 'b')).toMatchObject({ ok: false, type: 'FlowNotFound' });
  expect(await cardCount()).toBe(before);

  expect(await call('issueCard', issue(uniqueId('nexus-a-issue')))).toMatchObject({ ok: true, result: { cardholderId } });
  expect(await cardCount()).toBe(before + 1);
});

test('a key that leaves no room for the caller\'s prefix within the provider\'s 64 characters is refused ValidationFailed naming the field and the rule', async () => {
  const longest = 64 - 'team-a_'.length;
  const refused = await call('fundCard', { cardId: 'crd_any', amount: 500, idempotencyKey: 'k'.repeat(longest + 1) });
  expect(refused).toMatchObject({ ok: false, type: 'ValidationFailed', message: expect.stringContaining(`idempotencyKey must be 1-${longest} of [a-zA-Z0-9_-] over this endpoint`) });
});

test('docs/nexus.md "Calling it" shows the snippets these callers run', () => {
  const readme = readFileSync(resolve(__dirname, '../../docs/nexus.md'), 'utf8');
  for (const file of [TS_CALLER.replace(/\.js$/, '.ts'), join(GO_CALLER_DIR, 'main.go')]) {
    const source = readFileSync(file, 'utf8');
    const snippet = source.split(/\n.*the README's snippet: begin\n/)[1]?.split(/\n.*the README's snippet: end/)[0];
    expect(snippet).toBeDefined();
    expect(readme).toContain(snippet!.trim());
  }
});

/** Why the last attempt of the workflow's pending Nexus operation failed, as the caller's server keeps it (undefined: none failed, or none pending). */
async function lastAttemptFailure(workflowId: string): Promise<string | undefined> {
  const pending = (await caller.workflow.getHandle(workflowId).describe()).raw.pendingNexusOperations ?? [];
  return pending[0]?.lastAttemptFailure?.message ?? undefined;
}

/** The caller's history holds the scheduled Nexus operation. */
async function scheduled(workflowId: string): Promise<boolean> {
  const history = await caller.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).some((e) => e.nexusOperationScheduledEventAttributes);
}
