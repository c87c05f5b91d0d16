/** Issue 2's smoke test: a real workflow with real activities on the real Temporal dev server this run started. */
import { FAST_TIMINGS, startStack, temporalAddress, uniqueId, type Stack } from './helpers/stack';

describe('smoke', () => {
  let stack: Stack;
  afterAll(async () => stack?.close());

  test('issueCard completes on the real dev server, through real activities and the provider sandbox', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const workflowId = uniqueId('smoke-issue-card');
    const card = await stack.client.workflow.execute('issueCard', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [{ cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'Smoke', lastName: 'Test', timings: FAST_TIMINGS }],
    });
    const description = await stack.client.workflow.getHandle(workflowId).describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(card.status).toBe('ENABLE');
    process.stderr.write(`smoke: workflow ${workflowId} (${description.type}) COMPLETED on ${temporalAddress()}: card ${card.cardId} ${card.status}\n`);
  });
});
