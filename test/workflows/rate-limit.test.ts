import { ApplicationFailure } from '@temporalio/common';
import { decodeOptionalFailureToOptionalError, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { createDataConverter } from '../../src/codec/payload-codec';
import { issueTestCard } from '../helpers/flows';
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

    const history = await stack.client.workflow.getHandle(card.issuedBy).fetchHistory();
    const converter = loadDataConverter(createDataConverter(stack.config.codec));
    const events = history.events ?? [];
    let checked = 0;
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
    expect(checked).toBeGreaterThan(0);
  }, 120_000);
});
