/**
 * Funding and withdrawal. A call that may have taken effect is never repeated blindly: a retry
 * first asks GET /operations/{key} what became of the earlier attempt, and only when the
 * provider has no record of the key does it POST again, under the same key.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { ProviderClient } from '../provider/client';
import { isProviderError } from '../provider/errors';
import type { Operation } from '../provider/schemas';
import type { MoneyMovementKind } from '../shared/types';
import { currentAttempt, providerCall } from './provider-call';

export interface OperationOutcome {
  status: 'PROCESSING' | 'COMPLETED' | 'FAILED';
  operationId?: string;
  failureReason?: string;
}

export interface MoveMoneyRequest {
  kind: MoneyMovementKind;
  cardId: string;
  amount: number;
  idempotencyKey: string;
}

export function createFundingActivities({ provider }: { provider: ProviderClient }) {
  async function readOperation(idempotencyKey: string): Promise<Operation | undefined> {
    try {
      return await provider.getOperation(idempotencyKey);
    } catch (err) {
      if (isProviderError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  return {
    async moveMoney(req: MoveMoneyRequest): Promise<OperationOutcome> {
      return providerCall(async () => {
        if (currentAttempt() > 1) {
          const earlier = await readOperation(req.idempotencyKey);
          if (earlier) return outcomeFor(req, earlier);
        }
        const call = req.kind === 'funding' ? provider.fundCard.bind(provider) : provider.withdrawFromCard.bind(provider);
        const answer = await call(req.cardId, { amount: req.amount }, { idempotencyKey: req.idempotencyKey });
        if (answer.success) return { status: 'COMPLETED', operationId: answer.operationId };
        const recorded = await readOperation(req.idempotencyKey);
        return recorded ? outcomeFor(req, recorded) : { status: 'FAILED', failureReason: answer.message };
      });
    },

    async getOperation({ idempotencyKey }: { idempotencyKey: string }): Promise<OperationOutcome> {
      return providerCall(async () => {
        const op = await provider.getOperation(idempotencyKey);
        return { status: op.status, operationId: op.operationId, failureReason: op.failureReason };
      });
    },
  };
}

/** An operation found under our key must be ours: same card, same amount, same direction. */
function outcomeFor(req: MoveMoneyRequest, op: Operation): OperationOutcome {
  const type = req.kind === 'funding' ? 'FUNDING' : 'WITHDRAWAL';
  if (op.type !== type || op.cardId !== req.cardId || op.amount !== req.amount) {
    throw ApplicationFailure.create({
      type: 'IdempotencyConflict',
      message: `idempotency key ${req.idempotencyKey} was used for a different request`,
      nonRetryable: true,
    });
  }
  return { status: op.status, operationId: op.operationId, failureReason: op.failureReason };
}
