/**
 * Payouts: creation under the required idempotency key, and reads by merOrderNo. A retry
 * after an unknown outcome looks the payout up by its merOrderNo first (the spec's lookup for
 * reconciliation) and POSTs again only when the provider has none; the POST under the same
 * key would return the original order anyway (spec: "a retry returns the original order,
 * including a FAILED one"), so a payout is created once whatever happens.
 */
import type { ProviderClient } from '../provider/client';
import type { PayoutAnswer } from '../provider/answers';
import { isProviderError } from '../provider/errors';
import type { CreatePayoutRequest } from '../provider/api';
import { contradicts, idempotencyConflict, postReconcilingFirst } from './idempotent-post';
import { logExtraFields, providerCall } from './provider-call';

export function createPayoutActivities({ provider }: { provider: ProviderClient }) {
  return {
    async createPayout({ request, idempotencyKey }: { request: CreatePayoutRequest; idempotencyKey: string }): Promise<PayoutAnswer> {
      logExtraFields('createPayout', request.extra);
      return providerCall(() =>
        postReconcilingFirst({
          idempotencyKey,
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

/** The payout an earlier attempt created, if any; one under our merOrderNo for another request is a conflict. */
async function findPayout(provider: ProviderClient, request: CreatePayoutRequest, idempotencyKey: string): Promise<PayoutAnswer | undefined> {
  try {
    const found = await provider.getPayout(request.merOrderNo);
    const ours = { arriveAmount: request.arriveAmount, arriveCurrency: request.arriveCurrency, payeeAccountNo: request.payeeAccountNo };
    if (contradicts(found, ours)) throw idempotencyConflict(idempotencyKey);
    return found;
  } catch (err) {
    if (isProviderError(err, 'NotFound')) return undefined;
    throw err;
  }
}
