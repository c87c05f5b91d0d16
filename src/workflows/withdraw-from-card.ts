/** withdrawFromCard: moves money from a card back to the project wallet, once, under a durable key. */
import type { MoneyMovementInput, MoneyMovementResult } from '../shared/types';
import { moneyMovementFlow } from './lib/money-movement';
import { declareVersioning } from './lib/versioning';

export async function withdrawFromCard(input: MoneyMovementInput): Promise<MoneyMovementResult> {
  return moneyMovementFlow('withdrawal', input);
}

// docs/versioning.md: ends in minutes (at most its deadline, 4 h): it finishes on the build that started it, so a new build may change it without a marker.
declareVersioning('PINNED', withdrawFromCard);
