/** withdrawFromCard: moves money from a card back to the project wallet, once, under a durable key. */
import { setWorkflowOptions } from '@temporalio/workflow';
import type { MoneyMovementInput, MoneyMovementResult } from '../shared/types';
import { moneyMovementFlow } from './lib/money-movement';

export async function withdrawFromCard(input: MoneyMovementInput): Promise<MoneyMovementResult> {
  return moneyMovementFlow('withdrawal', input);
}

// docs/versioning.md: ends in minutes (at most its deadline, 4 h): it finishes on the build that started it, so a new build may change it without a marker.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, withdrawFromCard);
