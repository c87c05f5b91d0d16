/**
 * ReconciliationFailing's figure (issue 41, case 3): how many of a reconciliation's latest runs
 * failed one after another, read from Temporal's visibility as every worker reads it, and exported
 * as reconciliation_consecutive_failures. Real dev server; the runs are real refresh-bins runs on the
 * stack's workers (one completes) and runs no worker took, terminated (a run that did not do its work).
 */
import { Registry } from 'prom-client';
import { consecutiveFailures } from '../../src/temporal/reconciliation-runs';
import { reconciliationFailureMetrics } from '../../src/observability/metrics';
import { startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

describe('consecutive failed reconciliation runs', () => {
  let stack: Stack;
  afterAll(async () => stack?.close());

  test('counts the failed runs since the last completed one, per reconciliation, and the gauge exports it', async () => {
    stack = await startStack();
    const bins = () => consecutiveFailures(stack.client, stack.taskQueue).then((counts) => counts.get('refresh-bins'));
    expect(await bins()).toBe(0);

    // A completed run, then three that did not do their work (terminated while their start was still delayed).
    await stack.client.workflow.execute('refresh-bins', { taskQueue: stack.taskQueue, workflowId: uniqueId('refresh-bins'), args: [{}] });
    const failRun = async () => {
      const handle = await stack.client.workflow.start('refresh-bins', { taskQueue: stack.taskQueue, workflowId: uniqueId('refresh-bins'), args: [{}], startDelay: '1 hour' });
      await handle.terminate('test: a run that did not do its work');
    };
    await failRun();
    await failRun();
    await waitUntil(async () => (await bins()) === 2, 20_000, 'two failed runs visible');
    await failRun();
    await waitUntil(async () => (await bins()) === 3, 20_000, 'three failed runs visible');
    // Another reconciliation's runs are its own.
    expect((await consecutiveFailures(stack.client, stack.taskQueue)).get('reconcile-money')).toBe(0);

    const registry = new Registry();
    reconciliationFailureMetrics(registry, { read: () => consecutiveFailures(stack.client, stack.taskQueue), onReadFailed: () => undefined });
    expect(await registry.metrics()).toMatch(/^reconciliation_consecutive_failures\{reconciliation="refresh-bins"\} 3$/m);

    // A completed run ends the streak.
    await stack.client.workflow.execute('refresh-bins', { taskQueue: stack.taskQueue, workflowId: uniqueId('refresh-bins'), args: [{}] });
    await waitUntil(async () => (await bins()) === 0, 20_000, 'the streak ended by a completed run');
  });
});
