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
 * | the same merOrderNo for another payout | IdempotencyConflict, when an amount, currency or account the spec shows differs |
 * | the flow cannot say how it ended (creation deadline, still PENDING at the follow's deadline, cancelled, terminated) | `mayHaveTakenEffect: true` and an open item on the merOrderNo, asked until the payout's terminal status or an operator's `settle`; no record under it means it was never created |
 */
import type { ProviderClient } from '../provider/client';
import type { PayoutAnswer } from '../provider/answers';
import { isProviderError } from '../provider/errors';
import type { CreatePayoutRequest } from '../provider-api';
import { contradicts, idempotencyConflict, postReconcilingFirst, type Recalled } from './idempotent-post';
import { logExtraFields, providerCall } from './provider-call';

export function createPayoutActivities({ provider }: { provider: ProviderClient }) {
  return {
    async createPayout({ request, idempotencyKey, sentBefore }: { request: CreatePayoutRequest; idempotencyKey: string; sentBefore?: boolean }): Promise<PayoutAnswer> {
      logExtraFields('createPayout', request.extra);
      return providerCall(() =>
        postReconcilingFirst({
          idempotencyKey,
          endpoint: 'POST /payouts',
          idempotentBySpec: true,
          recallFirst: true,
          sentBefore,
          recall: () => findPayout(provider, request, idempotencyKey),
          post: () => provider.createPayout(request, { idempotencyKey }),
        }),
      );
    },

    /** Fails NotFound (not retried) when the provider knows no such payout. */
    async getPayout({ merOrderNo }: { merOrderNo: string }): Promise<PayoutAnswer> {
      return providerCall(() => provider.getPayout(merOrderNo));
    },
  };
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
 * Currencies compare without case; an account number the provider masks ("****6819", "GB29…6819")
 * is the same when its visible characters match ours at the same end. Anything else: equality.
 */
export function samePayoutField(field: string, shown: unknown, ours: unknown): boolean {
  if (typeof shown !== 'string' || typeof ours !== 'string') return shown === ours;
  if (field === 'arriveCurrency') return shown.toUpperCase() === ours.toUpperCase();
  if (field !== 'payeeAccountNo') return shown === ours;
  const visible = shown.split(/[^A-Za-z0-9]+/).filter(Boolean);
  if (visible.length === 1 && visible[0] === shown) return shown.replace(/\s/g, '') === ours.replace(/\s/g, '');
  const compact = ours.replace(/\s/g, '');
  return visible.length > 0 && compact.startsWith(shown.startsWith(visible[0]) ? visible[0] : '') && compact.endsWith(shown.endsWith(visible[visible.length - 1]) ? visible[visible.length - 1] : '');
}
