/**
 * A flow that ends OutcomeUnknown stays in sight until it is settled (issues 29, 39): it opens its
 * open item and marks itself ProviderStatus = OPEN_ITEM as it fails, and the worker's /metrics counts
 * the item in open_items under its flow kind, with open_item_oldest_age_seconds (the alert
 * OpenItemOpenTooLong reads it), until the item closes: the provider's final word, or an operator's
 * settlement. A flow that fails for another reason is not marked and opens nothing.
 */
import { Worker } from '@temporalio/worker';
import { workerDataConverter } from '../../src/codec/payload-codec';
import { freePort } from '../../src/ports';
import { PROVIDER_STATUS } from '../../src/shared/search-attributes';
import { OPEN_ITEM_STATUS } from '../../src/shared/open-items';
import { runCli } from '../../src/starter/run';
import type { AppProcess } from '../../tools/processes';
import { issueTestCard, workflowFailure } from '../helpers/flows';
import { startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { spawnWorker } from '../helpers/worker-process';
import { TIMINGS, faults } from '../money-edges/helpers';


describe('a flow that ended OutcomeUnknown', () => {
  let stack: Stack | undefined;
  let worker: AppProcess | undefined;
  afterEach(async () => {
    await worker?.stop();
    await stack?.close();
  });

  test('fundCard whose answer was cut off and whose operation cannot be read: an open item, marked OPEN_ITEM, counted on /metrics until the provider answers; a ValidationFailed is not', async () => {
    stack = await startStack({ profile: 'minimal', cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    // The flows run on a worker process of their own, which serves /metrics.
    await stack.stopWorkers();
    const metricsPort = await freePort();
    worker = spawnWorker(stack, { METRICS_PORT: String(metricsPort) });
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    await waitUntil(() => fetch(`${metricsUrl}/ready`).then((r) => r.ok), 90_000, 'the worker ready');
    const run = (workflowId: string, input: Record<string, unknown>) =>
      stack!.client.workflow.execute('fundCard', { taskQueue: stack!.taskQueue, workflowId, args: [{ timings: { ...TIMINGS, pollMaxIntervalMs: 60_000 }, ...input }] });
    const providerStatus = async (workflowId: string) => (await stack!.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes.get(PROVIDER_STATUS);

    // The funding takes effect but its answer is cut off; the operation's record is refused (403).
    await faults(stack, {
      'POST /cards/{cardId}/funding': { truncateRate: 1, maxFaults: 1 },
      'GET /operations/{idempotencyKey}': { refuseRate: 1, refuseStatus: 403 },
    });
    const unknownId = uniqueId('fund-unknown');
    const unknown = await workflowFailure(run(unknownId, { cardId: card.cardId, amount: 2500 }));
    expect(unknown.type).toBe('OutcomeUnknown');
    expect(await providerStatus(unknownId)).toBe(OPEN_ITEM_STATUS);

    const invalidId = uniqueId('fund-invalid');
    expect((await workflowFailure(run(invalidId, { cardId: card.cardId, amount: -1 }))).type).toBe('ValidationFailed');
    expect(await providerStatus(invalidId)).toBeUndefined();

    // Visibility catches up; the gauges read it at most every 10 s.
    const scrape = async () => {
      const text = await (await fetch(`${metricsUrl}/metrics`)).text();
      const open = Object.fromEntries([...text.matchAll(/^open_items\{flow_kind="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
      const oldest = /^open_item_oldest_age_seconds (\d+)$/m.exec(text)?.[1];
      const unsettled = Object.fromEntries([...text.matchAll(/^outcome_unknown_unsettled\{flow_kind="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
      return { open, oldest: oldest === undefined ? undefined : Number(oldest), unsettled };
    };
    await waitUntil(async () => (await scrape()).open.fundCard === 1, 60_000, 'open_items{flow_kind="fundCard"} 1');
    expect(await scrape()).toMatchObject({ open: { fundCard: 1, withdrawFromCard: 0, sendPayout: 0 }, oldest: expect.any(Number), unsettled: { fundCard: 0 } });

    // The operator settles it by the flow's key: the provider, asked again, says COMPLETED.
    await faults(stack, {});
    let stdout = '';
    const code = await runCli(['settle', String((unknown.details?.[0] as { idempotencyKey: string }).idempotencyKey), '--json'], () => stack!.config, { stdout: (t) => (stdout += t), stderr: () => undefined });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).result).toMatchObject({ verdict: 'moved', by: 'provider' });
    await waitUntil(async () => (await scrape()).open.fundCard === 0, 60_000, 'open_items{flow_kind="fundCard"} 0 once settled');
    expect((await scrape()).oldest).toBe(0);

    // Its history replays.
    const history = await stack.client.workflow.getHandle(unknownId).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! }, dataConverter: workerDataConverter(stack!.config) }, history, unknownId);
  }, 240_000);
});
