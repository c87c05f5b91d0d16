/** Payout reads: the order by merOrderNo, for the flow that follows it to a terminal status. */
import type { ProviderClient } from '../provider/client';
import type { Payout } from '../provider/schemas';
import { providerCall } from './provider-call';

export function createPayoutActivities({ provider }: { provider: ProviderClient }) {
  return {
    /** Fails NotFound (not retried) when the provider knows no such payout. */
    async getPayout({ merOrderNo }: { merOrderNo: string }): Promise<Payout> {
      return providerCall(() => provider.getPayout(merOrderNo));
    },
  };
}
