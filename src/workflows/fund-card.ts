/** fundCard: moves money from the project wallet onto a card, once, under a durable key. */
import type { MoneyMovementInput, MoneyMovementResult } from '../shared/types';
import { moneyMovementFlow } from './lib/money-movement';
import { declareVersioning } from './lib/versioning';

export async function fundCard(input: MoneyMovementInput): Promise<MoneyMovementResult> {
  return moneyMovementFlow('funding', input);
}

// docs/versioning.md: ends in minutes (at most its deadline, 4 h): it finishes on the build that started it, so a new build may change it without a marker.
declareVersioning('PINNED', fundCard);
