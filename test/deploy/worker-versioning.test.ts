/**
 * Worker Deployments on the dev server (issue 33, docs/versioning.md): a pinned flow started on
 * build A runs to its end on A while build B is current, a new start runs on B, and the card
 * workflow (pinned, release 3) is asked to roll over by the promotion. Both builds run the same code here: what is proven is the
 * routing, which is what lets a later build change a pinned flow without a marker.
 */
import { randomUUID } from 'node:crypto';
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

test('a pinned fundCard started on build A completes on A while B is current; a new one runs on B; the card workflow, pinned to A, is asked to roll over; a rollback makes A current again', async () => {
  const target: DeploymentTarget = { connection: stack.client.connection as Connection, namespace: stack.config.temporal.namespace, deploymentName };
  // Build A bootstrapped itself: the deployment had no current version.
  await waitUntil(async () => (await describeDeployment(target).catch(() => undefined))?.current === 'build-a', 30_000, 'build A current');
  const card = await issueTestCard(stack, 10_000);
  const client = typedClient(stack);
  await client.cardState(card.cardId); // the card workflow runs on A
  const fund = (amount: number) =>
    stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId: `fund-${randomUUID()}`, args: [{ cardId: card.cardId, amount, timings: FAST_TIMINGS }] });

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

  // Release 3: the card workflow is pinned to A. The promotion asked it to look at its target build (the
  // rollOver batch); this dev server (1.29.1) never tells a run its target changed, so it stays on A and
  // answers there. Its move at a continue-as-new needs server 1.30.2+: `npm run cluster-deploy` shows it.
  const cardId = entityWorkflowId('card', card.cardId);
  await waitUntil(async () => (await stack.client.workflow.getHandle(cardId).fetchHistory()).events!.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'rollOver'), 30_000, "the promotion's rollOver signal at the card workflow");
  await client.freeze(card.cardId);
  const cardTasks = await tasksOf(stack.client, cardId);
  expect(cardTasks.length).toBeGreaterThanOrEqual(2);
  expect(cardTasks.every((t) => t.buildId === 'build-a' && t.behavior === PINNED)).toBe(true);
  // Release 3's marker gate: the card run is pinned, so a build without its markers would never replay it.
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
