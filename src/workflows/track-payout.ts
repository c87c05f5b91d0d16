/**
 * trackPayout: follows a payout someone else created to a terminal status (COMPLETED or
 * SUCCESS, FAILED, CANCELLED or CANCELED) and answers the Payout order. It reads the order
 * first, which finds an unknown merOrderNo (NotFound) and a payout that ended long ago at once;
 * otherwise its webhooks or polling say how it ended (lib/payout.ts).
 *
 * A FAILED or cancelled payout is the terminal result this flow was asked for, returned, not
 * a workflow failure. A workflow failure means the tracking itself could not be done: bad
 * input, NotFound, or the deadline passed.
 *
 * Pinned to its build; while it waits, a changed target build moves it by a continue-as-new that
 * starts again from the order's read, keeping its deadline (lib/roll-over.ts).
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import { createPayoutRequest } from '../provider-api/payouts';
import type { PayoutAnswer as Payout } from '../provider/answers';
import { FailureType } from '../shared/failures';
import { describeErrors, hasErrors } from '../shared/card-rules';
import { FLOW_KIND } from '../shared/search-attributes';
import type { TrackPayoutInput } from '../shared/types';
import { followPayout, readPayout } from './lib/payout';
import { failWith } from './lib/provider';
import { declareVersioning } from './lib/versioning';
import { carriedFieldErrors, carriedOver, rollOverWith } from './lib/roll-over';

/** The flow's own input: a caller's, and across a continue-as-new onto a new build, the deadline it keeps. */
export type TrackPayoutFlowInput = TrackPayoutInput & { deadlineAt?: number };

export async function trackPayout(input: TrackPayoutFlowInput): Promise<Payout> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'trackPayout' }]);
  assertValid(input);
  const { deadlineAt: _carried, ...asked } = input;
  return followPayout(input.merOrderNo, await readPayout(input.merOrderNo), input.timings, {
    notCreatedByUs: true,
    deadlineAt: carriedOver(input.deadlineAt),
    rollOver: (deadlineAt) => rollOverWith<typeof trackPayout>({ ...asked, deadlineAt }),
  });
}

function assertValid(input: TrackPayoutFlowInput): void {
  const errors = { ...createPayoutRequest.only('merOrderNo').errors({ merOrderNo: input?.merOrderNo }), ...carriedFieldErrors(input, 'deadlineAt', 'a payout tracking request') };
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid payout tracking request: ${describeErrors(errors)}`, [{ errors }]);
}

// docs/versioning.md: waits days for a payout's terminal status, pinned to each run's build; moves to a new build at a continue-as-new while it waits (lib/roll-over.ts).
declareVersioning('PINNED', trackPayout);
