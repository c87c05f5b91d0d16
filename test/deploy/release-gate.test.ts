/**
 * Release 2's gate (temporal/release-gate.ts, CHANGELOG "Upgrading to release 2"): while a short
 * flow that ran on an unversioned worker is open on the task queue, `deploy release-gate` exits 1
 * naming it and a versioned worker of release 2 refuses to start, naming it; once none is open, the
 * gate passes and the worker starts (a flow whose first workflow task has not completed does not
 * count). On the dev server, with the stack's unversioned worker as the
 * release-1 fleet. And release 4's marker gate (temporal/marker-gate.ts): `deploy marker-gate` exits 1
 * while a long-lived type release 3 pinned has a running run that is not pinned, and a ramp of a
 * markerless build over a build of release 3 first holds the payouts and onboardings release 3 let
 * auto-upgrade on that build, then refuses while the gate is closed.
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { createWorkers, type WorkerFleet } from '../../src/fleet/workers';
import { describeDeployment, releaseOf, RELEASE, type DeploymentTarget } from '../../src/temporal/deployments';
import { releaseGateQuery } from '../../src/temporal/release-gate';
import { runInProcess } from '../starter/cli-helpers';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';
import { issueTestCard } from '../helpers/flows';
import { readUntil, waitUntil } from '../helpers/wait';
import { requests } from '../money-edges/helpers';
import { entityWorkflowId } from '../../src/shared/ids';
import { ROLLING_FLOWS } from '../../src/shared/pinned-flows';

jest.setTimeout(120_000);

let stack: Stack;
afterAll(async () => stack?.close());

const gateCli = async () => {
  const run = await runInProcess(stack, ['deploy', 'release-gate', '--json']);
  return { code: run.code, json: JSON.parse(run.stdout) };
};

/** Release 2's worker: the same code, versioned (a build ID), on the stack's task queue. */
const release2Worker = (): Promise<WorkerFleet> =>
  createWorkers({
    config: { ...stack.config, temporal: { ...stack.config.temporal, deployment: { name: `gate-${randomUUID().slice(0, 8)}`, buildId: 'release-2', bootstrap: 'if-none' } } },
    taskQueue: stack.taskQueue,
    workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE,
    enforceRateBudget: false,
  });

test('an unversioned short flow open: the gate names it and release 2 refuses to start; none open: both pass', async () => {
  stack = await startStack({ cardProvisioningMs: 50 });
  const card = await issueTestCard(stack, 10_000);
  // A funding the provider holds PROCESSING: the flow has run workflow tasks on the unversioned worker and stays open.
  await stack.control('PUT', '/config', { operationProcessingMs: 60_000 });
  const workflowId = `fund-${randomUUID()}`;
  const open = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, amount: 1500, idempotencyKey: randomUUID(), timings: FAST_TIMINGS }] });
  await waitUntil(async () => (await requests(stack, 'fundCard')) >= 1, 30_000, 'the funding posted');
  await waitUntil(async () => (await stack.client.workflow.count(releaseGateQuery(stack.taskQueue))).count > 0, 30_000, 'visibility to list the open funding');

  const closed = await gateCli();
  expect(closed.code).toBe(1);
  expect(closed.json.error.type).toBe('ReleaseGateClosed');
  expect(closed.json.error.message).toContain(`fundCard ${workflowId}`);
  await expect(release2Worker()).rejects.toThrow(new RegExp(`release gate closed: 1 short flow\\(s\\).*fundCard ${workflowId}`));

  await open.terminate('the release-1 flow ended');
  // A short flow whose first workflow task has not completed (here: delayed an hour) carries no version either, but recorded nothing: not counted.
  const waiting = await stack.client.workflow.start('fundCard', { taskQueue: stack.taskQueue, workflowId: `fund-${randomUUID()}`, startDelay: '1 hour', args: [{ cardId: card.cardId, amount: 100, idempotencyKey: randomUUID() }] });
  await waitUntil(async () => (await gateCli()).code === 0, 30_000, 'the gate to pass');
  expect((await gateCli()).json.result).toEqual({ passes: true, open: 0, flows: [] });
  const fleet = await release2Worker();
  const running = fleet.run();
  fleet.shutdown();
  await running;
  await waiting.terminate('test over');
});

test("the marker gate: a card workflow that is not pinned (here: on the unversioned worker) closes it, naming the run; once it ended, the gate passes", async () => {
  // A stack of its own: the test above made a versioned build current on its queue (release 2's worker
  // bootstraps it), and with that build's workers gone a new flow there would wait for them.
  const own = await startStack({ cardProvisioningMs: 50 });
  try {
    const card = await issueTestCard(own, 1000);
    const cardWorkflow = entityWorkflowId('card', card.cardId);
    const markerCli = async () => {
      const run = await runInProcess(own, ['deploy', 'marker-gate', '--json']);
      return { code: run.code, json: JSON.parse(run.stdout) };
    };
    const closed = await readUntil(markerCli, (answer) => answer.code === 1 && answer.json.error.message.includes(cardWorkflow), 30_000);
    expect(closed.json.error.type).toBe('MarkerGateClosed');
    expect(closed.json.error.message).toContain(`cardLifecycle ${cardWorkflow}`);
    // Only the long-lived pinned types count (the card workflow, an attempt of its issuance if one is still watching), none of the short flows.
    const listed: Array<{ type: string; workflowId: string }> = closed.json.error.details[0].runs;
    expect(listed.filter((r) => !(ROLLING_FLOWS as readonly string[]).includes(r.type))).toEqual([]);
    expect(listed.map((r) => r.workflowId)).toContain(cardWorkflow);

    for (const run of listed) await own.client.workflow.getHandle(run.workflowId).terminate('test: the unpinned run ended').catch(() => undefined);
    await waitUntil(async () => (await markerCli()).code === 0, 30_000, 'the marker gate to pass');
    expect((await markerCli()).json.result).toEqual({ passes: true, open: 0, runs: [], toHold: 0 });
  } finally {
    await own.close();
  }
});

test("release 4's ramp over a build of release 3: an unpinned payout run is held on that build; an unpinned card workflow refuses the ramp, nothing changed; once it ended, the ramp goes through", async () => {
  // Payouts stay PENDING and nothing wakes their flows: the runs started on the unversioned worker stay unpinned.
  const own = await startStack({ cardProvisioningMs: 50, payoutProcessingMs: 600_000 });
  const fleets: Array<{ fleet: WorkerFleet; running: Promise<void> }> = [];
  const deploymentName = `marker-${randomUUID().slice(0, 8)}`;
  const target: DeploymentTarget = { connection: own.client.connection as Connection, namespace: own.config.temporal.namespace, deploymentName };
  const build = async (buildId: string, bootstrap: 'if-none' | 'never') => {
    const fleet = await createWorkers({
      config: { ...own.config, temporal: { ...own.config.temporal, deployment: { name: deploymentName, buildId, bootstrap } } },
      taskQueue: own.taskQueue,
      workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE,
      enforceRateBudget: false,
    });
    fleets.push({ fleet, running: fleet.run() });
    await waitUntil(async () => (await releaseOf(target, buildId).catch(() => 0)) === RELEASE, 30_000, `build ${buildId} to record its release`);
  };
  const deployCli = async (args: string[]) => {
    const run = await runInProcess(own, ['deploy', ...args, '--json'], { config: { ...own.config, temporal: { ...own.config.temporal, deploymentName } } });
    return { code: run.code, json: JSON.parse(run.stdout) };
  };
  try {
    const merOrderNo = `po-${randomUUID().slice(0, 8)}`;
    const payout = await own.client.workflow.start('sendPayout', {
      taskQueue: own.taskQueue,
      workflowId: `send-payout/${merOrderNo}`,
      args: [{ merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 10_000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819' }],
    });
    await waitUntil(async () => (await own.control('GET', '/stats')).endpoints.createPayout?.requests > 0, 30_000, 'the payout created');
    const card = await issueTestCard(own, 100);
    const cardWorkflow = entityWorkflowId('card', card.cardId);

    // Build A: release 3 (its metadata says so), current; build B: this code, release 4, not current.
    await build('build-a', 'if-none');
    await waitUntil(async () => (await describeDeployment(target)).current === 'build-a', 30_000, 'build A current');
    await own.client.connection.workflowService.updateWorkerDeploymentVersionMetadata({
      namespace: target.namespace,
      deploymentVersion: { deploymentName, buildId: 'build-a' },
      upsertEntries: { 'card-issuing-release': defaultPayloadConverter.toPayload(3) },
    });
    await build('build-b', 'never');

    const refused = await readUntil(() => deployCli(['ramp', '10', '--build', 'build-b']), (answer) => answer.code === 1 && answer.json.error.message.includes(cardWorkflow), 60_000);
    expect(refused.json.error.type).toBe('DeploymentRefused');
    expect(refused.json.error.message).toMatch(/build build-b may not take flows yet: marker gate closed/);
    expect((await describeDeployment(target)).ramping).toBeUndefined();
    // Held before the gate was asked: the payout's run is pinned to build A, where it ends.
    const held = await payout.describe();
    expect(held.raw.workflowExecutionInfo?.versioningInfo?.versioningOverride?.pinned?.version?.buildId).toBe('build-a');

    const marker = await deployCli(['marker-gate']);
    expect(marker.json.result.toHold).toBe(0);
    for (const run of marker.json.error?.details?.[0]?.runs ?? []) await own.client.workflow.getHandle(run.workflowId).terminate('test: the unpinned run ended').catch(() => undefined);
    await own.client.workflow.getHandle(cardWorkflow).terminate('test: the unpinned card run ended').catch(() => undefined);
    const ramped = await readUntil(() => deployCli(['ramp', '10', '--build', 'build-b']), (answer) => answer.code === 0, 60_000);
    expect(ramped.json.result.ramping).toMatchObject({ buildId: 'build-b', percent: 10 });
    await payout.terminate('test over');
  } finally {
    for (const { fleet } of fleets) fleet.shutdown();
    await Promise.all(fleets.map(({ running }) => running.catch(() => undefined)));
    await own.close();
  }
});
