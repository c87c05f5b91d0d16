/**
 * Following a payout to its terminal status, for trackPayout (someone else's payout) and
 * sendPayout (ours): the payout's entity workflow tells it, from the PAYOUT_<STATUS> webhook or,
 * when that is late, its polls of GET /payouts/{merOrderNo}. FAILED and cancelled payouts are results (status
 * and failureReason in them), not workflow failures; only the deadline fails the flow.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { PayoutAnswer } from '../../provider/answers';
import { FailureType } from '../../shared/failures';
import { PROVIDER_STATUS } from '../../shared/search-attributes';
import { isFinal } from '../../shared/statuses';
import type { WaitTimings } from '../../shared/types';
import { awaitOutcome } from './await-outcome';
import { failWith, providerCalls } from './provider';

/** Bank transfers may take days: the default deadline is longer than other flows'. */
const DEFAULT_PAYOUT_DEADLINE_MS = 7 * 24 * 60 * 60 * 1000;

export function readPayout(merOrderNo: string): Promise<PayoutAnswer> {
  return providerCalls('general').getPayout({ merOrderNo });
}

/** The payout once terminal, starting from what the provider last said of it. */
export async function followPayout(merOrderNo: string, latest: PayoutAnswer, timings?: WaitTimings, notCreatedByUs = false): Promise<PayoutAnswer> {
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: latest.status }]);
  if (isFinal('payout', latest.status)) return latest;
  const outcome = await awaitOutcome({ kind: 'payout', entityId: merOrderNo, timings: { deadlineMs: DEFAULT_PAYOUT_DEADLINE_MS, ...timings }, notCreatedByUs });
  if (!outcome) {
    // Ours was created and may still pay out: the flow's open item follows it from here (docs/idempotency.md, "Open items").
    failWith(FailureType.PayoutTrackingTimedOut, `payout ${merOrderNo} had not reached a terminal status when the deadline passed`, [
      { merOrderNo, lastStatus: latest.status, ...(notCreatedByUs ? {} : { mayHaveTakenEffect: true }) },
    ]);
  }
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: outcome.status }]);
  // PAYOUT_<STATUS> webhooks carry the whole Payout order, as GET /payouts/{merOrderNo} does.
  return outcome.data as unknown as PayoutAnswer;
}
