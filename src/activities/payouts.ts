/**
 * Payouts: creation under the required idempotency key, and reads by merOrderNo.
 *
 * | case | POST /payouts (key required by the spec, durable; a retry returns the original order, FAILED included) |
 * |---|---|
 * | key | the caller's, else derived from the workflow ID (`payout`; the typed client's workflow ID is `send-payout/<merOrderNo>`) |
 * | every attempt, the first included | GET /payouts/{merOrderNo} first: a payout found that shows our amount (and nothing contradicting) is the answer, whatever key created it |
 * | retry, crash, 5xx, timeout, answer cut off, re-scheduled after a 429 | the lookup first; no payout: POST again under the same key |
 * | payout found that shows no amount | the POST under the key confirms it: the original order, or 409 (another request's) |
 * | 409 we cannot read (the first POST still processing) | in progress: the retry looks up again, then posts under the key; bounded by the creation deadline (then OutcomeUnknown) |
 * | lookup fails after a POST that may have taken effect | 5xx, 429: retried; 403 or another refusal: OutcomeUnknown with the key |
 * | restart of the workflow ID, before or after a deploy | the lookup finds the first run's payout: nothing is posted |
 * | the same merOrderNo for another payout | IdempotencyConflict, when an amount, currency or account the spec shows visibly differs; how the provider presents a value (an account masked with symbols or letters, `XXXX…6819`; a currency not shown as a code) never does, and nothing else concludes "not moved" (only a payout's own FAILED or cancelled status) |
 * | the flow cannot say how it ended (creation deadline, still PENDING at the follow's deadline, cancelled, terminated) | `mayHaveTakenEffect: true` and an open item on the merOrderNo, asked until the payout's terminal status or an operator's `settle`; no record under it means it was never created |
 */
import { recordAttemptOfRun, tellAttemptOfRun, type AttemptDeps } from './attempts';
import type { ProviderClient } from '../provider/client';
import type { PayoutAnswer } from '../provider/answers';
import { isProviderError } from '../provider/errors';
import type { CreatePayoutRequest } from '../provider-api';
import { contradicts, idempotencyConflict, postReconcilingFirst, type Recalled } from './idempotent-post';
import { logExtraFields, providerCall } from './provider-call';
import { Context } from '@temporalio/activity';
import type { CapabilityHolder, CardActionVerifier } from '../codec/card-capability';
import type { ApprovedPayout, WithPayoutCapability } from '../shared/card-capability';
import { requirePayoutDecision } from './card-authority';

export function createPayoutActivities({ provider, cardActions, temporal, openItemMinAskMs }: { provider: ProviderClient; cardActions: CardActionVerifier } & AttemptDeps) {
  return {
    async createPayout({ request, idempotencyKey, sentBefore, approval }: { request: CreatePayoutRequest; idempotencyKey: string; sentBefore?: boolean; approval?: ApprovedPayout }): Promise<PayoutAnswer> {
      // A payout held for approval posts only with an approver's decision, checked here again before any call (an earlier attempt may have posted: then its refusal says so).
      if (approval) checkApproval(cardActions, request, approval, sentBefore === true || Context.current().info.attempt > 1);
      logExtraFields('createPayout', request.extra);
      return providerCall(() =>
        postReconcilingFirst({
          idempotencyKey,
          endpoint: 'POST /payouts',
          idempotentBySpec: true,
          recallFirst: true,
          sentBefore,
          recall: () => findPayout(provider, request, idempotencyKey),
          // The wallet may pay out from here on: recorded first, so no stop of the flow loses it (issue 51).
          beforeSend: () => recordAttemptOfRun({ temporal, openItemMinAskMs }, { idempotencyKey, merOrderNo: request.merOrderNo, amount: request.arriveAmount }),
          post: () => provider.createPayout(request, { idempotencyKey }),
        }),
      );
    },

    /** An operator's decision on a payout held for approval (lib/payout.ts): its signature against the allow-list, and the audit record. No provider call. */
    async verifyPayoutDecision({ decision, ...expected }: { decision: WithPayoutCapability } & Parameters<CardActionVerifier['verifyPayout']>[1]): Promise<CapabilityHolder> {
      return requirePayoutDecision(cardActions, decision, expected, { step: 'decision' });
    },

    /** Fails NotFound (not retried) when the provider knows no such payout. */
    async getPayout({ merOrderNo }: { merOrderNo: string }): Promise<PayoutAnswer> {
      const payout = await providerCall(() => provider.getPayout(merOrderNo));
      // A terminal status is the provider's word on the run's attempt.
      await tellAttemptOfRun(temporal, 'payout', payout.status ?? '');
      return payout;
    },
  };
}

function checkApproval(cardActions: CardActionVerifier, request: CreatePayoutRequest, { decision, approvers }: ApprovedPayout, mayHaveTakenEffect: boolean): void {
  const { workflowId = '', runId = '' } = Context.current().info.workflowExecution ?? {};
  const { merOrderNo, arriveAmount, arriveCurrency } = request;
  requirePayoutDecision(cardActions, decision, { workflowId, runId, merOrderNo, arriveAmount, arriveCurrency, action: 'approvePayout', approvers }, { step: 'before POST /payouts', mayHaveTakenEffect });
}

/**
 * The payout an earlier attempt created, if any. It is ours when it shows our amount and nothing
 * it shows contradicts our request; one under our merOrderNo for another request is a conflict;
 * one that shows no amount is confirmed by the POST under our key (the original order, or 409).
 */
async function findPayout(provider: ProviderClient, request: CreatePayoutRequest, idempotencyKey: string): Promise<Recalled<PayoutAnswer> | undefined> {
  try {
    const found = await provider.getPayout(request.merOrderNo);
    const ours = { arriveAmount: request.arriveAmount, arriveCurrency: request.arriveCurrency, payeeAccountNo: request.payeeAccountNo };
    if (contradicts(found, ours, samePayoutField)) throw idempotencyConflict(idempotencyKey, 'the payout found under this merOrderNo');
    return { outcome: found, ours: found.arriveAmount === request.arriveAmount };
  } catch (err) {
    if (isProviderError(err, 'NotFound')) return undefined;
    throw err;
  }
}

/**
 * How a field the provider shows compares with ours. Only a visible difference contradicts: how the
 * provider chooses to present a value never does (issue 51), since a contradiction ends the recall
 * `IdempotencyConflict`, which says nothing of ours moved. Currencies compare as ISO codes, without
 * case; a currency shown otherwise ("€", "978") shows nothing to compare. An account number compares
 * by the digits it shows (sameAccountNo). Anything else: equality.
 */
export function samePayoutField(field: string, shown: unknown, ours: unknown): boolean {
  if (typeof shown !== 'string' || typeof ours !== 'string') return shown === ours;
  if (field === 'arriveCurrency') return !CURRENCY_CODE.test(shown.trim()) || shown.trim().toUpperCase() === ours.trim().toUpperCase();
  if (field === 'payeeAccountNo') return sameAccountNo(shown, ours);
  return shown === ours;
}

const CURRENCY_CODE = /^[A-Za-z]{3}$/;

/**
 * An account number the provider shows, against ours: the same when the digits it shows are ours.
 * Providers mask with symbols ("****6819", "GB29…6819") and with letters ("XXXX…6819",
 * "XXXXXXXXXXXXXXXXXX6819"); a letter may also be a real one (an IBAN's country and bank code), and
 * from the answer alone the two cannot be told apart. So letters and symbols are never compared:
 * each run of digits shown must be ours at the same place (a run that starts the shown value starts
 * ours, one that ends it ends ours, the others appear in ours in order). A value of digits only is
 * shown in full and must equal ours. Spaces and separators in ours are formatting.
 */
export function sameAccountNo(shown: string, ours: string): boolean {
  const visible = shown.replace(/\s/g, '');
  const own = ours.replace(/[^A-Za-z0-9]/g, '');
  if (visible.toUpperCase() === own.toUpperCase()) return true;
  if (/^\d+$/.test(visible)) return false;
  let from = 0;
  for (const run of visible.matchAll(/\d+/g)) {
    const digits = run[0];
    const starts = run.index === 0;
    const ends = run.index + digits.length === visible.length;
    if (starts && !own.startsWith(digits)) return false;
    if (ends) return own.endsWith(digits) && own.length - digits.length >= from;
    const at = starts ? 0 : own.indexOf(digits, from);
    if (at < 0) return false;
    from = at + digits.length;
  }
  return true;
}
