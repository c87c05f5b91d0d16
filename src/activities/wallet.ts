/** The project's wallet, as the provider reports it (shape not shown: kept whole). */
import type { ProviderClient } from '../provider/client';
import type { WalletBalanceAnswer } from '../provider/answers';
import { providerCall } from './provider-call';

export function createWalletActivities({ provider }: { provider: ProviderClient }) {
  return {
    async getWalletBalance(): Promise<WalletBalanceAnswer> {
      return providerCall(() => provider.getWalletBalance());
    },
  };
}
