/**
 * src/temporal/deployments.ts: the server keeps a deployment in a workflow that continues as new
 * after every change, and a describe between two runs answers NOT_FOUND for a deployment that
 * exists (seen by `npm run cluster-deploy` right after a promotion). Only a NOT_FOUND that lasts is
 * DeploymentNotFound: a move that took effect is not reported as failed by the describe after it.
 */
import type { Connection } from '@temporalio/client';
import { DeploymentNotFound, describeDeployment } from '../../src/temporal/deployments';

const notFound = () => Object.assign(new Error('5 NOT_FOUND: Worker Deployment not found'), { code: 5 });

function target(answers: Array<'not found' | 'found'>) {
  const calls = { count: 0 };
  const describeWorkerDeployment = async () => {
    if (answers[Math.min(calls.count++, answers.length - 1)] === 'not found') throw notFound();
    return { workerDeploymentInfo: { name: 'card-issuing', routingConfig: { currentDeploymentVersion: { buildId: 'v2' } } } };
  };
  const connection = { workflowService: { describeWorkerDeployment } } as unknown as Connection;
  return { t: { connection, namespace: 'ns', deploymentName: 'card-issuing' }, calls };
}

test('a NOT_FOUND between two runs of the deployment workflow is asked again', async () => {
  const { t, calls } = target(['not found', 'not found', 'found']);
  expect((await describeDeployment(t)).current).toBe('v2');
  expect(calls.count).toBe(3);
});

test('a NOT_FOUND that lasts is DeploymentNotFound', async () => {
  const { t, calls } = target(['not found']);
  await expect(describeDeployment(t)).rejects.toBeInstanceOf(DeploymentNotFound);
  expect(calls.count).toBe(5);
});
