import { ApplicationFailure } from '@temporalio/common';
import { decodeOptionalFailureToOptionalError, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { createDataConverter } from '../../src/codec/payload-codec';
import { entityWorkflowId } from '../../src/shared/ids';
import { issueTestCard } from '../helpers/flows';
import { NativeConnection, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { RATE_QUEUES, rateClassQueue } from '../../src/shared/task-queues';
import { connectionOptions } from '../../src/temporal/connection';
import { createWorkers, queueRate, type WorkerFleet } from '../../src/fleet/workers';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

describe('rate limits', () => {
  let stack: Stack;
  afterEach(async () => stack?.close());

  test('a 429 is waited out on a timer and retried after the window resets, not before, without spending retry attempts', async () => {
    // One call per endpoint per 3 s window: polling GET /cards hits the limit at once.
    stack = await startStack({ cardProvisioningMs: 4000, webhook: { dropRate: 1 }, rateLimit: { windowMs: 3000, general: 1 } });
    const card = await issueTestCard(stack, 500, { timings: { ...FAST_TIMINGS, webhookWaitMs: 100, pollInitialIntervalMs: 100, pollMaxIntervalMs: 100 } });
    expect(card.status).toBe('ENABLE');
    // Once the headers said the window was spent, the client refused locally instead of spending a request on a 429.
    const stats = await stack.control('GET', '/stats');
    expect(stats.endpoints.getCard.requests).toBeLessThanOrEqual(2 * Math.ceil(10_000 / 3000) + 2);

    // POST /cards runs in the flow; the polls of GET /cards/{id} in the card's own workflow.
    const converter = loadDataConverter(createDataConverter(stack.config.codec));
    let checked = 0;
    for (const workflowId of [card.issuedBy, entityWorkflowId('card', card.cardId)]) {
      const events = (await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      for (const [i, event] of events.entries()) {
        const failure = event.activityTaskFailedEventAttributes?.failure;
        if (!failure) continue;
        const err = await decodeOptionalFailureToOptionalError(converter, failure);
        const cause = err instanceof ApplicationFailure ? err : (err?.cause as ApplicationFailure | undefined);
        if (cause?.type !== 'RateLimited') continue;
        const { resetAt } = cause.details![0] as { resetAt: number };
        // The next attempt is a new activity, scheduled after a timer that ends no sooner than the reset.
        const next = events.slice(i + 1).find((e) => e.activityTaskScheduledEventAttributes);
        expect(next).toBeDefined();
        expect(ms(next!.eventTime)).toBeGreaterThanOrEqual(resetAt);
        // The rate-limited attempt was the activity's first: waiting for budget used no retry attempt.
        const started = events.slice(0, i).reverse().find((e) => e.activityTaskStartedEventAttributes);
        expect(started!.activityTaskStartedEventAttributes!.attempt).toBe(1);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  }, 120_000);

  test('the fleet rate is set on the queue itself: neither a worker without the limit nor one with a higher rate lifts it', async () => {
    stack = await startStack();
    const taskQueue = `${stack.taskQueue}-fleet`;
    const fleets: WorkerFleet[] = [];
    const runs: Promise<void>[] = [];
    const native = await NativeConnection.connect(connectionOptions(stack.config.temporal));
    const hotQueue = rateClassQueue(taskQueue, 'card-create');
    const rogue = await Worker.create({
      connection: native,
      taskQueue: hotQueue,
      activities: { createCard: async () => undefined },
      maxTaskQueueActivitiesPerSecond: 1000,
      // Its own identity: pollers are listed per identity, and the fleets in this process share the default one.
      identity: 'rogue-worker',
    });
    try {
      for (const enforceRateBudget of [true, false]) {
        const fleet = await createWorkers({ config: stack.config, taskQueue, workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, enforceRateBudget });
        fleets.push(fleet);
        runs.push(fleet.run());
      }
      // The misconfigured worker polls last.
      runs.push(rogue.run());
      const service = stack.client.connection.workflowService;
      const describe = (queue: string) =>
        service.describeTaskQueue({
          namespace: stack.config.temporal.namespace,
          taskQueue: { name: queue },
          taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
          reportConfig: true,
        });
      await eventually(async () => ((await describe(hotQueue)).pollers ?? []).some((p) => p.identity === 'rogue-worker' && p.ratePerSecond === 1000));
      for (const queue of RATE_QUEUES) {
        const answer = await describe(rateClassQueue(taskQueue, queue));
        const expected = queueRate(queue, stack.config.provider);
        expect(answer.config?.queueRateLimit?.rateLimit?.requestsPerSecond).toBeCloseTo(expected, 5);
        expect(answer.effectiveRateLimit?.rateLimitSource).toBe(temporal.api.enums.v1.RateLimitSource.RATE_LIMIT_SOURCE_API);
        expect(answer.effectiveRateLimit?.requestsPerSecond).toBeCloseTo(expected, 5);
      }
    } finally {
      if (rogue.getState() === 'RUNNING') rogue.shutdown();
      fleets.forEach((f) => f.shutdown());
      await Promise.allSettled(runs);
      await native.close();
    }
  }, 120_000);
});

/** Polls until `check` holds; the test's own timeout bounds it. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 200));
}
