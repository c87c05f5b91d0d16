/**
 * Reads of the provider that other services need but that are no flow of their own: the
 * wallet balance and the eSIM plan catalogue. They run as short workflows so that callers
 * never hold provider credentials and every read shares the fleet's rate budget and retries.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { WalletBalanceAnswer } from '../provider/answers';
import { FLOW_KIND } from '../shared/search-attributes';
import { providerCalls } from './lib/provider';

export async function walletBalance(): Promise<WalletBalanceAnswer> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'walletBalance' }]);
  return providerCalls('general').getWalletBalance();
}

export async function esimPlans(): Promise<Array<Record<string, unknown>>> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'esimPlans' }]);
  return providerCalls('general').listEsimPlans();
}
