/** Cards created straight at the provider (not through a flow), ENABLE and with a balance, for the measures that move money. */
import { createProviderClient } from '../src/provider/client';
import { until } from './lib';
import type { BenchStack } from './stack';

export async function readyCards(stack: BenchStack, count: number): Promise<string[]> {
  const provider = createProviderClient(stack.config('bench').provider);
  try {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const card = await provider.createCard({ cardBinId: 'bin_visa_basic', initialAmount: 100_000, firstName: 'Bench', lastName: 'Mark' });
      ids.push(card.cardId);
    }
    for (const id of ids) {
      await until(`card ${id} ENABLE`, async () => ((await provider.getCard(id)).status === 'ENABLE' ? true : undefined), 30_000, 100);
    }
    return ids;
  } finally {
    await provider.close();
  }
}
