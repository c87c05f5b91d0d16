/**
 * Reads an operator asks for through the worker (starter `bins`, `issue-card`'s BIN check,
 * `operation KEY`): the CLI holds no provider credentials, and these reads share the fleet's rate
 * budget and retries. Reads only: nothing here moves money or changes a record.
 */
import type { BinCache } from '../provider/bin-cache';
import type { ProviderClient } from '../provider/client';
import type { CardBinAnswer, OperationAnswer } from '../provider/answers';
import { readOperation } from './idempotent-post';
import { providerCall } from './provider-call';

export function createOperatorReadActivities({ provider, bins }: { provider: ProviderClient; bins: BinCache<CardBinAnswer> }) {
  return {
    /** Every BIN the project may issue from: this worker's 24 h cache (the spec allows it), or the provider asked now when `refresh`. */
    async listCardBins({ refresh = false }: { refresh?: boolean } = {}): Promise<CardBinAnswer[]> {
      return providerCall(() => (refresh ? bins.refresh() : bins.list()));
    },

    /** GET /operations/{key} as the provider answers it, whole; null when it has no record of the key (404). */
    async readOperationRecord({ idempotencyKey }: { idempotencyKey: string }): Promise<OperationAnswer | null> {
      return providerCall(async () => (await readOperation(provider, idempotencyKey)) ?? null);
    },
  };
}
