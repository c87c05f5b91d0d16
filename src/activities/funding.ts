/**
 * Funding and withdrawal. A call that may have taken effect is never repeated blindly: a retry
 * first asks GET /operations/{key} what became of the earlier attempt, and only when the
 * provider has no record of the key does it POST again, under the same key.
 */
import type { ProviderClient } from '../provider/client';
import type { OperationAnswer } from '../provider/answers';
import { classifyMessage } from '../provider/errors';
import { phaseOf } from '../shared/statuses';
import type { MoneyMovementKind } from '../shared/types';
import { contradicts, fromOperation, idempotencyConflict, postReconcilingFirst, readOperation } from './idempotent-post';
import { providerCall } from './provider-call';

export interface OperationOutcome {
  /** The provider's word (PROCESSING, COMPLETED, FAILED, or one the spec does not show); shared/statuses.ts reads it. */
  status: string;
  operationId?: string;
  failureReason?: string;
  /** Our failure type for a FAILED operation whose reason we recognise (e.g. InsufficientFunds). */
  failureType?: string;
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
        postReconcilingFirst({
          idempotencyKey: req.idempotencyKey,
          recall: fromOperation(provider, req.idempotencyKey, (earlier) => reconcile(req, earlier)),
          post: async () => {
            const call = req.kind === 'funding' ? provider.fundCard.bind(provider) : provider.withdrawFromCard.bind(provider);
            const answer = await call(req.cardId, { amount: req.amount }, { idempotencyKey: req.idempotencyKey });
            if (answer.success === true) return { status: 'COMPLETED', operationId: answer.operationId };
            // Not a plain success: the operation's record says what happened.
            const recorded = await readOperation(provider, req.idempotencyKey);
            if (recorded) return outcomeOf(req, recorded);
            return answer.success === false ? failed(answer.message) : { status: 'PROCESSING' };
          },
        }),
      );
    },

    async getOperation({ idempotencyKey }: { idempotencyKey: string }): Promise<OperationOutcome> {
      return providerCall(async () => {
        const op = await provider.getOperation(idempotencyKey);
        return { status: op.status, operationId: op.operationId, ...failureOf(op) };
      });
    },
  };
}

/**
 * A completed operation without its operationId is answered again by the same POST under the
 * same key (the spec: same key + same body returns the original response, no new side effect).
 */
function reconcile(req: MoveMoneyRequest, op: OperationAnswer): OperationOutcome | undefined {
  const outcome = outcomeOf(req, op);
  return outcome.status === 'COMPLETED' && outcome.operationId === undefined ? undefined : outcome;
}

/** An operation found under our key must be ours: same card, same amount, same direction, as far as the provider shows them. */
function outcomeOf(req: MoveMoneyRequest, op: OperationAnswer): OperationOutcome {
  const type = req.kind === 'funding' ? 'FUNDING' : 'WITHDRAWAL';
  if (contradicts(op, { type, cardId: req.cardId, amount: req.amount })) throw idempotencyConflict(req.idempotencyKey);
  return { status: op.status, operationId: op.operationId, ...failureOf(op) };
}

function failureOf(op: OperationAnswer): Pick<OperationOutcome, 'failureReason' | 'failureType'> {
  return phaseOf('operation', op.status) === 'failed' ? reasonOf(op.failureReason) : {};
}

function failed(reason: string | undefined): OperationOutcome {
  return { status: 'FAILED', ...reasonOf(reason) };
}

/** The provider's reason (a code word or plain text) and, when we recognise it, our failure type. */
function reasonOf(reason: string | undefined): Pick<OperationOutcome, 'failureReason' | 'failureType'> {
  return { failureReason: reason, failureType: reason === undefined ? undefined : classifyMessage(reason) };
}
