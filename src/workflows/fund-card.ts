/** fundCard: moves money from the project wallet onto a card, once, under a durable key. */
import type { MoneyMovementInput, MoneyMovementResult } from '../shared/types';
import { moneyMovementFlow } from './lib/money-movement';

export async function fundCard(input: MoneyMovementInput): Promise<MoneyMovementResult> {
  return moneyMovementFlow('funding', input);
}
