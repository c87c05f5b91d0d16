/**
 * Funding and withdrawal. A call that may have taken effect is never repeated blindly: a retry
 * first asks GET /operations/{key} what became of the earlier attempt, and only when the
 * provider has no record of the key does it POST again, under the same key.
 */
import type { ProviderClient } from '../provider/client';
import type { Operation } from '../provider/schemas';
import type { MoneyMovementKind } from '../shared/types';
import { idempotencyConflict, postReconcilingFirst, readOperation } from './idempotent-post';
import { providerCall } from './provider-call';

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
  return {
    async moveMoney(req: MoveMoneyRequest): Promise<OperationOutcome> {
      return providerCall(() =>
        postReconcilingFirst(provider, {
          idempotencyKey: req.idempotencyKey,
          reconcile: (earlier) => outcomeFor(req, earlier),
          post: async () => {
            const call = req.kind === 'funding' ? provider.fundCard.bind(provider) : provider.withdrawFromCard.bind(provider);
            const answer = await call(req.cardId, { amount: req.amount }, { idempotencyKey: req.idempotencyKey });
            if (answer.success) return { status: 'COMPLETED', operationId: answer.operationId };
            const recorded = await readOperation(provider, req.idempotencyKey);
            return recorded ? outcomeFor(req, recorded) : { status: 'FAILED', failureReason: answer.message };
          },
        }),
      );
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
    throw idempotencyConflict(req.idempotencyKey);
  }
  return { status: op.status, operationId: op.operationId, failureReason: op.failureReason };
}
