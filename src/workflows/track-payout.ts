/**
 * trackPayout: follows a payout to a terminal status (COMPLETED or SUCCESS, FAILED, CANCELLED or CANCELED) and
 * answers the Payout order. It reads the order first, which finds an unknown merOrderNo
 * (NotFound) and a payout that ended long ago at once; otherwise its PAYOUT_<STATUS> webhooks
 * (through the payout's entity workflow) or polling GET /payouts/{merOrderNo} say how it ended.
 *
 * A FAILED or CANCELLED payout is the terminal result this flow was asked for, returned, not
 * a workflow failure: the flow tracks a payout someone else created, and the payout having
 * ended is what it reports (status and failureReason are in the result). A workflow failure
 * means the tracking itself could not be done: bad input, NotFound, or the deadline passed.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import { createPayoutRequestSchema } from '../provider/schemas';
import type { PayoutAnswer as Payout } from '../provider/answers';
import { FailureType } from '../shared/failures';
import { FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import { isFinal } from '../shared/statuses';
import type { TrackPayoutInput, WaitTimings } from '../shared/types';
import { awaitOutcome } from './lib/await-outcome';
import { failWith, providerActivities, typedFailures, withRateBudget } from './lib/provider';

/** Bank transfers may take days: the default deadline is longer than other flows'. */
const DEFAULT_PAYOUT_DEADLINE_MS = 7 * 24 * 60 * 60 * 1000;

export async function trackPayout(input: TrackPayoutInput): Promise<Payout> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'trackPayout' }]);
  assertValid(input);
  const general = providerActivities('general');
  const readPayout = () => typedFailures(() => withRateBudget(() => general.getPayout({ merOrderNo: input.merOrderNo })));

  const first = await readPayout();
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: first.status }]);
  if (isFinal('payout', first.status)) return first;

  const timings: WaitTimings = { deadlineMs: DEFAULT_PAYOUT_DEADLINE_MS, ...input.timings };
  const outcome = await awaitOutcome({
    kind: 'payout',
    entityId: input.merOrderNo,
    poll: async () => {
      const payout = await readPayout();
      return { status: payout.status, data: payout as unknown as Record<string, unknown> };
    },
    timings,
  });
  if (!outcome) {
    failWith(FailureType.PayoutTrackingTimedOut, `payout ${input.merOrderNo} had not reached a terminal status when the deadline passed`, [
      { merOrderNo: input.merOrderNo },
    ]);
  }
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: outcome.status }]);
  // PAYOUT_<STATUS> webhooks carry the whole Payout order, as GET /payouts/{merOrderNo} does.
  return outcome.data as unknown as Payout;
}

function assertValid(input: TrackPayoutInput): void {
  const parsed = createPayoutRequestSchema.shape.merOrderNo.safeParse(input?.merOrderNo);
  if (!parsed.success) {
    const errors = { merOrderNo: parsed.error.issues[0].message };
    failWith(FailureType.ValidationFailed, `invalid payout tracking request: merOrderNo ${errors.merOrderNo}`, [{ errors }]);
  }
}
