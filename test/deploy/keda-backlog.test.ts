/**
 * Autoscaling with versioned workers (issue 41, case 4): what KEDA's temporal scaler reads, asked of
 * the run's real dev server for a task queue whose workers run under Worker Deployment versions.
 * Its default mode asks DescribeTaskQueue; its deployment mode (`workerDeploymentName`,
 * `workerDeploymentBuildId`) asks DescribeWorkerDeploymentVersion for that version's task queues.
 * Flows wait on build B (current) while build A still runs beside it. Measured on this server
 * (v1.30.8; v1.29 summed every version's in both modes): the default mode sees the queue's whole
 * backlog, every version's summed, and the deployment mode each version's own. So the chart's
 * ScaledObject (default mode) still scales on the backlog with versioned workers, and a backlog of
 * flows pinned to the previous build scales the current build's workers too (docs/deployment.md);
 * a ScaledObject per build could name its version (workerDeploymentName, workerDeploymentBuildId).
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createWorkers } from '../../src/fleet/workers';
import { describeDeployment, promoteBuild, type DeploymentTarget } from '../../src/temporal/deployments';
import { startStack, type Stack } from '../helpers/stack';
import { readUntil, waitUntil } from '../helpers/wait';

const WORKFLOW = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;
const FLOWS = 5;

let stack: Stack;
afterAll(async () => stack?.close());

test("with versioned workers the scaler's default query sees the queue's whole backlog, its deployment query each version's own", async () => {
  const deploymentName = `keda-${randomUUID().slice(0, 8)}`;
  stack = await startStack({}, { TEMPORAL_WORKER_BUILD_ID: 'build-a', TEMPORAL_DEPLOYMENT_NAME: deploymentName });
  const connection = stack.client.connection as Connection;
  const { namespace } = stack.config.temporal;
  const target: DeploymentTarget = { connection, namespace, deploymentName };
  await waitUntil(async () => (await describeDeployment(target).catch(() => undefined))?.current === 'build-a', 30_000, 'build A current');
  // Build B's workers register it; it becomes current; then no worker polls at all.
  const configB = { ...stack.config, temporal: { ...stack.config.temporal, deployment: { name: deploymentName, buildId: 'build-b', bootstrap: 'never' as const } } };
  const fleetB = await createWorkers({ config: configB, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, enforceRateBudget: false });
  const runningB = fleetB.run();
  await waitUntil(async () => Boolean((await describeDeployment(target)).builds.find((b) => b.buildId === 'build-b')), 30_000, 'build B registered');
  await promoteBuild(target, 'build-b');
  fleetB.shutdown();
  await runningB;
  await stack.stopWorkers();
  for (let i = 0; i < FLOWS; i++) await stack.client.workflow.start('walletBalance', { taskQueue: stack.taskQueue, workflowId: `keda-${randomUUID()}` });

  const deploymentMode = async (buildId: string) => {
    const version = await connection.workflowService.describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName, buildId }, reportTaskQueueStats: true });
    return (version.versionTaskQueues ?? [])
      .filter((q) => q.name === stack.taskQueue && q.type === WORKFLOW)
      .reduce((sum, q) => sum + Number(q.stats?.approximateBacklogCount ?? 0), 0);
  };
  const defaultMode = async () => {
    const queue = await connection.workflowService.describeTaskQueue({ namespace, taskQueue: { name: stack.taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL }, taskQueueType: WORKFLOW, reportStats: true });
    return Number(queue.stats?.approximateBacklogCount ?? 0);
  };
  // Each query's stats are the server's approximate counts, refreshed on their own: a CI run under load read build B's
  // version as 0 just after the queue's own count reached the backlog. Each is read until it counts it (or 15 s: the test's 150 s holds every wait).
  await waitUntil(async () => (await defaultMode()) === FLOWS, 30_000, 'the backlog counted');
  expect(await readUntil(() => deploymentMode('build-b').catch(() => undefined), (n) => n === FLOWS, 15_000)).toBe(FLOWS);
  // Build A has no flow waiting, and its version says so: 0. Asked until the server answers at all: under load
  // 1.30.8 answered NOT_FOUND for one of the version's activity queues while it registered them.
  expect(await readUntil(() => deploymentMode('build-a').catch(() => undefined), (n) => n !== undefined, 15_000)).toBe(0);
}, 150_000);
