/** withdrawFromCard: moves money from a card back to the project wallet, once, under a durable key. */
import type { MoneyMovementInput, MoneyMovementResult } from '../shared/types';
import { moneyMovementFlow } from './lib/money-movement';

export async function withdrawFromCard(input: MoneyMovementInput): Promise<MoneyMovementResult> {
  return moneyMovementFlow('withdrawal', input);
}
