/** KYC activities: the cardholder's status, as card issuance under a KYC BIN needs it. */
import type { ProviderClient } from '../provider/client';
import { isProviderError } from '../provider/errors';
import { providerCall } from './provider-call';

export function createKycActivities({ provider }: { provider: ProviderClient }) {
  return {
    /** null when the provider knows no such cardholder. */
    async getCardholder({ id }: { id: string }): Promise<{ id: string; kycStatus: string; reason?: string } | null> {
      return providerCall(async () => {
        try {
          const holder = await provider.getCardholder(id);
          return { id: holder.id, kycStatus: holder.kycStatus, reason: holder.reason };
        } catch (err) {
          if (isProviderError(err, 'NotFound')) return null;
          throw err;
        }
      });
    },
  };
}
