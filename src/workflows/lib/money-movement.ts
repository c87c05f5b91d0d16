/**
 * Funding and withdrawal under a durable idempotency key, shared by the fundCard and
 * withdrawFromCard workflows and by the card workflow's updates. The key is fixed before
 * the first call (the caller's, or derived from the workflow ID) and travels in the
 * activity's input, so it is in history and every retry reuses it.
 */
import { sleep, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { CARD_ID, FLOW_KIND, PROVIDER_STATUS } from '../../shared/search-attributes';
import { isUnknownStatus, phaseOf } from '../../shared/statuses';
import { idempotencyKeyFor } from './keys';
import { FailureType } from '../../shared/failures';
import { describeErrors, hasErrors, moneyMovementErrors } from '../../shared/card-rules';
import type { MoneyMovementInput, MoneyMovementKind, MoneyMovementResult } from '../../shared/types';
import { failWith, providerCalls } from './provider';
import { DEFAULT_TIMINGS } from './await-outcome';
import { tellCardWorkflow } from './tell-card';

/** A money movement must never be given up while its outcome is unknown: attempts are bounded by time, not count. */
const moneyRetry = { maximumAttempts: Number.POSITIVE_INFINITY, maximumInterval: '20 seconds' } as const;

export function validateMoneyMovement(kind: MoneyMovementKind, input: MoneyMovementInput): void {
  const errors = moneyMovementErrors(kind, input);
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid ${kind}: ${describeErrors(errors)}`, [{ errors }]);
}

export async function moveMoney(kind: MoneyMovementKind, input: MoneyMovementInput, keyScope = workflowInfo().workflowId): Promise<MoneyMovementResult> {
  validateMoneyMovement(kind, input);
  const idempotencyKey = input.idempotencyKey ?? idempotencyKeyFor(kind === 'funding' ? 'fund' : 'wdr', keyScope);
  const acts = providerCalls(kind, { retry: moneyRetry, idempotencyKey });
  const request = { kind, cardId: input.cardId, amount: input.amount, idempotencyKey };

  let outcome = await acts.moveMoney(request);
  let interval = input.timings?.pollInitialIntervalMs ?? 1000;
  // PROCESSING, or a status the spec does not show: not final, so asked again (a movement has no deadline).
  while (phaseOf('operation', outcome.status) === 'pending') {
    if (isUnknownStatus('operation', outcome.status)) upsertSearchAttributes([{ key: PROVIDER_STATUS, value: outcome.status }]);
    await sleep(interval);
    interval = Math.min(interval * 2, input.timings?.pollMaxIntervalMs ?? DEFAULT_TIMINGS.pollMaxIntervalMs);
    outcome = await acts.getOperation({ idempotencyKey });
  }
  if (phaseOf('operation', outcome.status) === 'failed') {
    const type = outcome.failureType === FailureType.InsufficientFunds ? FailureType.InsufficientFunds : FailureType.OperationFailed;
    // The provider's reason may be free text: it stays in the details, out of the message.
    failWith(type, `${kind} under key ${idempotencyKey} failed at the provider (${outcome.failureType ?? 'reason in details'}); a new idempotency key is needed to try again`, [
      { idempotencyKey, failureReason: outcome.failureReason },
    ]);
  }
  return { cardId: input.cardId, amount: input.amount, operationId: outcome.operationId ?? '', status: 'COMPLETED', idempotencyKey };
}

/** The body of the fundCard and withdrawFromCard workflows: searchable by card, then the movement. */
export async function moneyMovementFlow(kind: MoneyMovementKind, input: MoneyMovementInput): Promise<MoneyMovementResult> {
  const cardId = typeof input?.cardId === 'string' && input.cardId ? [{ key: CARD_ID, value: input.cardId }] : [];
  upsertSearchAttributes([{ key: FLOW_KIND, value: kind === 'funding' ? 'fundCard' : 'withdrawFromCard' }, ...cardId]);
  return tellCardWorkflow(await moveMoney(kind, input));
}
