/** Payout reads: the order by merOrderNo, for the flow that follows it to a terminal status. */
import type { ProviderClient } from '../provider/client';
import type { PayoutAnswer } from '../provider/answers';
import { providerCall } from './provider-call';

export function createPayoutActivities({ provider }: { provider: ProviderClient }) {
  return {
    /** Fails NotFound (not retried) when the provider knows no such payout. */
    async getPayout({ merOrderNo }: { merOrderNo: string }): Promise<PayoutAnswer> {
      return providerCall(() => provider.getPayout(merOrderNo));
    },
  };
}
