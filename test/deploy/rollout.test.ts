/**
 * The rollout with nobody at the keyboard (issue 41, case 1; docs/versioning.md, "Rollout and
 * rollback"): `deploy rollout` ramps a new build, holds each step while its gate watches, and
 * promotes it; when flows started during the ramp keep failing their workflow tasks, it rolls the
 * ramp back instead and exits 1 DeploymentGateFailed. Real dev server; the builds run the same code,
 * and the failing flow is one of a type no build has (its workflow task fails on every attempt).
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import { createWorkers, type WorkerFleet } from '../../src/fleet/workers';
import { describeDeployment, type DeploymentTarget } from '../../src/temporal/deployments';
import { jsonOf, runInProcess } from '../starter/cli-helpers';
import { startStack, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

jest.setTimeout(180_000);

let stack: Stack;
const fleets: Array<{ fleet: WorkerFleet; running: Promise<void> }> = [];
const deploymentName = `rollout-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  stack = await startStack({}, { TEMPORAL_WORKER_BUILD_ID: 'build-a', TEMPORAL_DEPLOYMENT_NAME: deploymentName });
});

afterAll(async () => {
  for (const { fleet, running } of fleets) {
    fleet.shutdown();
    await running.catch(() => undefined);
  }
  await stack?.close();
});

/** A build's workers, beside the stack's (same code). */
async function startBuild(buildId: string): Promise<void> {
  const config = { ...stack.config, temporal: { ...stack.config.temporal, deployment: { name: deploymentName, buildId, bootstrap: 'never' as const } } };
  const fleet = await createWorkers({ config, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, enforceRateBudget: false });
  fleets.push({ fleet, running: fleet.run() });
}

test('a healthy build is ramped, held and promoted by itself; a build whose ramp leaves flows failing is rolled back, exit 1', async () => {
  const target: DeploymentTarget = { connection: stack.client.connection as Connection, namespace: stack.config.temporal.namespace, deploymentName };
  await waitUntil(async () => (await describeDeployment(target).catch(() => undefined))?.current === 'build-a', 30_000, 'build A current');

  await startBuild('build-b');
  const healthy = await runInProcess(stack, ['deploy', 'rollout', '--build', 'build-b', '--steps', '20,60', '--soak', '2', '--failing-attempts', '2', '--json']);
  // On a wrong exit code the received value is the CLI's stderr, which names the cause.
  expect(healthy.code === 0 ? 0 : `exit ${healthy.code}: ${healthy.stderr} ${healthy.stdout}`).toBe(0);
  expect(jsonOf(healthy).result).toMatchObject({ current: 'build-b' });
  expect(healthy.stderr).toMatch(/ramped to 20 %[\s\S]*ramped to 60 %[\s\S]*gate passed: build build-b is current/);

  await startBuild('build-c');
  const rollout = runInProcess(stack, ['deploy', 'rollout', '--build', 'build-c', '--steps', '50', '--soak', '10', '--failing-attempts', '2', '--json']);
  // During the ramp a flow that cannot progress on any build: its workflow task fails attempt after attempt.
  await waitUntil(async () => (await describeDeployment(target)).ramping?.buildId === 'build-c', 60_000, 'build C ramping');
  const stuck = await stack.client.workflow.start('noSuchWorkflow', { taskQueue: stack.taskQueue, workflowId: `rollout-stuck-${randomUUID()}` });
  const bad = await rollout;
  expect(bad.code === 1 ? 1 : `exit ${bad.code}: ${bad.stderr} ${bad.stdout}`).toBe(1);
  expect(jsonOf(bad)).toMatchObject({ ok: false, error: { type: 'DeploymentGateFailed' }, result: { from: 'build-c', to: 'build-b', atPercent: 50 } });
  expect(jsonOf(bad).result.failing).toContain(stuck.workflowId);
  const after = await describeDeployment(target);
  expect(after.current).toBe('build-b');
  expect(after.ramping).toBeUndefined();
  await stuck.terminate('test done');

  // Refused before anything moves: a rollout's flags are checked.
  const refused = await runInProcess(stack, ['deploy', 'rollout', '--steps', '60,20']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/--steps must rise/);
});
