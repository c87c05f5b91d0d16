/**
 * Worker Deployments on the dev server (issue 33, docs/versioning.md): a pinned flow started on
 * build A runs to its end on A while build B is current, a new start runs on B, and the long-lived
 * runs pinned to A (the card workflow, a payout following its PENDING payout, an onboarding
 * awaiting its review) continue as new onto B once the promotion's rollOver wakes them (the dev
 * server's 1.30.8 tells a pinned run its target changed), carrying what they need: nothing is
 * posted or submitted again. Both builds run the same code here: what is proven is the routing and
 * the move, which is what lets a later build change any workflow without a marker.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { createWorkers, type WorkerFleet } from '../../src/fleet/workers';
import { RELEASE, describeDeployment, movePinnedFlows, releaseOf, type DeploymentTarget } from '../../src/temporal/deployments';
import { runInProcess } from '../starter/cli-helpers';
import { entityWorkflowId } from '../../src/shared/ids';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';
import { issueTestCard } from '../helpers/flows';
import { waitUntil } from '../helpers/wait';
import { ledger, requests, typedClient } from '../money-edges/helpers';
import { sampleFolder, sampleKycForm, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { onboardingQuery } from '../../src/shared/messages';

jest.setTimeout(180_000);

let stack: Stack;
let fleetB: WorkerFleet | undefined;
let runningB: Promise<void> | undefined;
const deploymentName = `test-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  stack = await startStack({ cardProvisioningMs: 50 }, { TEMPORAL_WORKER_BUILD_ID: 'build-a', TEMPORAL_DEPLOYMENT_NAME: deploymentName });
});

afterAll(async () => {
  fleetB?.shutdown();
  await runningB?.catch(() => undefined);
  await stack?.close();
});

/** The build of every workflow task that completed in the run's history, and the behaviour each declared. */
async function tasksOf(client: Client, workflowId: string): Promise<Array<{ buildId?: string; behavior?: number }>> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .map((e) => e.workflowTaskCompletedEventAttributes)
    .filter((a): a is temporal.api.history.v1.IWorkflowTaskCompletedEventAttributes => Boolean(a))
    .map((a) => ({ buildId: a.deploymentVersion?.buildId ?? undefined, behavior: a.versioningBehavior ?? undefined }));
}

/** The operator CLI's `deploy …` through its runner, as JSON. */
async function deployCli(args: string[]) {
  const run = await runInProcess(stack, ['deploy', ...args, '--json']);
  return { code: run.code, json: JSON.parse(run.stdout) };
}

const PINNED = 1;

/** Until the workflow's latest run is another than `firstRunId` and has run its tasks on `buildId`, pinned. */
async function rolledOnto(workflowId: string, firstRunId: string, buildId: string): Promise<void> {
  await waitUntil(async () => {
    const latest = await stack.client.workflow.getHandle(workflowId).describe();
    if (latest.runId === firstRunId) return false;
    const tasks = await tasksOf(stack.client, workflowId);
    return tasks.length > 0 && tasks.every((t) => t.buildId === buildId && t.behavior === PINNED);
  }, 60_000, `${workflowId} to continue as new onto ${buildId}`);
  expect((await stack.client.workflow.getHandle(workflowId, firstRunId).describe()).status.name).toBe('CONTINUED_AS_NEW');
}

test('a pinned fundCard started on build A completes on A while B is current; a new one runs on B; the card workflow, a payout and an onboarding pinned to A move to B at a continue-as-new; a rollback makes A current again', async () => {
  const target: DeploymentTarget = { connection: stack.client.connection as Connection, namespace: stack.config.temporal.namespace, deploymentName };
  // Build A bootstrapped itself: the deployment had no current version.
  await waitUntil(async () => (await describeDeployment(target).catch(() => undefined))?.current === 'build-a', 30_000, 'build A current');
  const card = await issueTestCard(stack, 10_000);
  const client = typedClient(stack);
  await client.cardState(card.cardId); // the card workflow runs on A
  const fund = (amount: number) =>
    stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId: `fund-${randomUUID()}`, args: [{ cardId: card.cardId, amount, timings: FAST_TIMINGS }] });

  // A payout the provider holds PENDING and a KYC review it holds open: both wait on A.
  await stack.control('PUT', '/config', { payoutProcessingMs: 600_000, kycReviewMs: 600_000 });
  const longWait = { ...FAST_TIMINGS, deadlineMs: 170_000 };
  const merOrderNo = `po-${randomUUID().slice(0, 8)}`;
  const payout = await stack.client.workflow.start('sendPayout', {
    taskQueue: stack.taskQueue,
    workflowId: `send-payout/${merOrderNo}`,
    args: [{ merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 10_000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: longWait }],
  });
  const documents = sampleFolder();
  const onboarding = await stack.client.workflow.start('onboardCardholder', { taskQueue: stack.taskQueue, workflowId: `onboard-${randomUUID()}`, args: [sampleKycForm(writeSampleDocuments(documents).documents, { timings: longWait })] });
  const endpointRequests = async (endpoint: string): Promise<number> => (await stack.control('GET', '/stats')).endpoints[endpoint]?.requests ?? 0;
  await waitUntil(async () => (await endpointRequests('createPayout')) === 1, 30_000, 'the payout created');
  const cardholderId = await (async () => {
    let id: string | undefined;
    await waitUntil(async () => Boolean((id = (await onboarding.query(onboardingQuery)).cardholderId)), 30_000, 'the KYC submitted');
    return id!;
  })();
  const submissions = await endpointRequests('submitKycForm');
  const cardId = entityWorkflowId('card', card.cardId);
  const cardRunOnA = (await stack.client.workflow.getHandle(cardId).describe()).runId;

  // A funding the provider holds PROCESSING: the flow polls on A while B becomes current.
  await stack.control('PUT', '/config', { operationProcessingMs: 12_000 });
  const onA = await fund(1500);
  await waitUntil(async () => (await requests(stack, 'fundCard')) >= 1, 30_000, 'the funding posted');

  fleetB = await createWorkers({
    config: { ...stack.config, temporal: { ...stack.config.temporal, deployment: { name: deploymentName, buildId: 'build-b', bootstrap: 'never' } } },
    taskQueue: stack.taskQueue,
    workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE,
    enforceRateBudget: false,
  });
  runningB = fleetB.run();
  // A build no worker runs is refused, and nothing changes.
  const unknown = await deployCli(['promote', '--build', 'build-z']);
  expect([unknown.code, unknown.json.error.type]).toEqual([1, 'DeploymentRefused']);
  // Refused until B's workers have polled every task queue A's do (the server says so): asked again until then.
  await waitUntil(async () => (await deployCli(['promote', '--build', 'build-b'])).code === 0, 30_000, 'build B promoted');
  const status = await deployCli(['status']);
  expect(status.json.result.current).toBe('build-b');
  expect(status.json.result.builds.map((b: { buildId: string; status: string }) => [b.buildId, b.status])).toEqual([
    ['build-a', 'DRAINING'],
    ['build-b', 'CURRENT'],
  ]);

  await stack.control('PUT', '/config', { operationProcessingMs: 0 });
  const resultA = await onA.result();
  expect(resultA.status).toBe('COMPLETED');
  const tasksA = await tasksOf(stack.client, onA.workflowId);
  expect(tasksA.length).toBeGreaterThanOrEqual(2);
  expect(tasksA.every((t) => t.buildId === 'build-a' && t.behavior === PINNED)).toBe(true);

  const onB = await fund(700);
  expect((await onB.result()).status).toBe('COMPLETED');
  const tasksB = await tasksOf(stack.client, onB.workflowId);
  expect(tasksB.every((t) => t.buildId === 'build-b' && t.behavior === PINNED)).toBe(true);

  // The long-lived runs were pinned to A. The promotion's rollOver woke each; the server told it its target
  // changed, and it continued as new onto B (lib/roll-over.ts), its first run closed CONTINUED_AS_NEW.
  for (const [workflowId, firstRunId] of [[cardId, cardRunOnA], [payout.workflowId, payout.firstExecutionRunId], [onboarding.workflowId, onboarding.firstExecutionRunId]]) {
    await rolledOnto(workflowId, firstRunId, 'build-b');
  }
  // The card answers on B; the payout and the onboarding finish there, nothing posted or submitted again.
  await client.freeze(card.cardId);
  await stack.control('POST', `/payouts/${merOrderNo}/status`, { status: 'COMPLETED' });
  await stack.control('POST', `/kyc/${cardholderId}/decision`, { kycStatus: 'APPROVED' });
  expect(await payout.result()).toMatchObject({ merOrderNo, status: 'COMPLETED' });
  expect(await onboarding.result()).toMatchObject({ id: cardholderId, kycStatus: 'APPROVED' });
  expect([await endpointRequests('createPayout'), await endpointRequests('submitKycForm')]).toEqual([1, submissions]);
  rmSync(documents, { recursive: true, force: true });
  // Every long-lived run is pinned: the marker gate passes.
  await waitUntil(async () => (await deployCli(['marker-gate'])).code === 0, 30_000, 'the marker gate to pass');

  // Rollback: A, current before B, is current again, and a new flow runs on it.
  const rolledBack = await deployCli(['rollback']);
  expect(rolledBack.code).toBe(0);
  expect([rolledBack.json.result.from, rolledBack.json.result.to, rolledBack.json.result.deployment.current]).toEqual(['build-b', 'build-a', 'build-a']);
  await client.unfreeze(card.cardId);
  const afterRollback = await fund(300);
  await afterRollback.result();
  expect((await tasksOf(stack.client, afterRollback.workflowId)).every((t) => t.buildId === 'build-a')).toBe(true);

  expect((await ledger(stack)).violations).toEqual([]);
});

test('deploy refuses bad input before any call, naming the argument and the rule (exit 2)', async () => {
  for (const [args, message] of [
    [['ramp', '150'], 'PERCENT must be a number above 0 and below 100'],
    [['ramp'], 'PERCENT must be a number above 0 and below 100'],
    [['promote', '--build', 'a b'], '--build must be a build ID'],
    [['rollback', '--build', 'x'], 'deploy rollback takes no --build'],
    [['status', 'now'], 'deploy status takes no argument'],
    [['release-gate', '--soak', '5'], 'deploy release-gate takes no --soak'],
    [['release-gate', 'now'], 'deploy release-gate takes no argument'],
    [['upgrade'], 'ACTION must be status, ramp, promote, rollback, rollout, release-gate or marker-gate'],
  ] as const) {
    const run = await deployCli([...args]);
    expect([run.code, run.json.error.type]).toEqual([2, 'UsageError']);
    expect(run.json.error.message).toContain(message);
  }
});

test('pinned flows of this release are never moved to a build of an earlier release: refused before anything is listed or moved', async () => {
  const target: DeploymentTarget = { connection: stack.client.connection as Connection, namespace: stack.config.temporal.namespace, deploymentName };
  // Each build's workers record their release in the version's metadata.
  await waitUntil(async () => (await releaseOf(target, 'build-a')) === RELEASE && (await releaseOf(target, 'build-b')) === RELEASE, 30_000, 'both builds to record their release');
  // build-a stands in for a build of release 1, which recorded nothing.
  await stack.client.connection.workflowService.updateWorkerDeploymentVersionMetadata({ namespace: target.namespace, deploymentVersion: { deploymentName, buildId: 'build-a' }, removeEntries: ['card-issuing-release'] });
  expect(await releaseOf(target, 'build-a')).toBe(1);
  const listed: string[] = [];
  const list = (query: string) => (listed.push(query), stack.client.workflow.list({ query }));
  await expect(movePinnedFlows(target, 'build-b', 'build-a', list)).rejects.toThrow(new RegExp(`pinned to build build-b \\(release ${RELEASE}\\) were not moved to build build-a \\(release 1\\)`));
  expect(listed).toEqual([]);
  // Forward, release 1 to this release, they move as before.
  await expect(movePinnedFlows(target, 'build-a', 'build-b', list)).resolves.toEqual(expect.any(Array));
  expect(listed).toHaveLength(1);
});
