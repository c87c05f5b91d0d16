/**
 * Funding and withdrawal under a durable idempotency key, shared by the fundCard and
 * withdrawFromCard workflows and by the card workflow's updates. The key is fixed before
 * the first call (the caller's, or derived from the workflow ID) and travels in the
 * activity's input, so it is in history and every retry reuses it (activities/funding.ts has
 * the table of every case: retry, crash, cut answer, restart after a deploy).
 *
 * A movement has a deadline (timings.deadlineMs, default MONEY_DEADLINE_MS): when the provider
 * has not said COMPLETED or FAILED by then, the movement ends OutcomeUnknown with its key and
 * the provider's last word, and a card's queue of operations moves on.
 */
import { sleep, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { CARD_ID, FLOW_KIND } from '../../shared/search-attributes';
import { isUnknownStatus, phaseOf } from '../../shared/statuses';
import { idempotencyKeyFor } from './keys';
import { FailureType } from '../../shared/failures';
import { describeErrors, hasErrors, moneyMovementErrors } from '../../shared/card-rules';
import type { MoneyMovementInput, MoneyMovementKind, MoneyMovementResult } from '../../shared/types';
import { failWith, providerCalls, readAfterEffect } from './provider';
import { DEFAULT_TIMINGS, recordUnknownStatus } from './await-outcome';
import { cadenceOf } from './open-item-of';
import type { AttemptOf, OpenItemOwner } from '../../shared/open-items';

/** A money movement is not given up on for a count of attempts: only its deadline ends it. */
const moneyRetry = { maximumAttempts: Number.POSITIVE_INFINITY, maximumInterval: '20 seconds' } as const;

/** Hours, not days: a movement stuck longer needs a person, and a card's other operations wait behind it. */
export const MONEY_DEADLINE_MS = 4 * 60 * 60 * 1000;

export function validateMoneyMovement(kind: MoneyMovementKind, input: MoneyMovementInput): void {
  const errors = moneyMovementErrors(kind, input);
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid ${kind}: ${describeErrors(errors)}`, [{ errors }]);
}

interface Telling {
  /** A standalone flow's: the activity that sees the movement COMPLETED tells the card workflow (activities/funding.ts). */
  tellCard?: boolean;
  /** A card workflow's update: its owner (the run and update ID). Default: this run. */
  owner?: OpenItemOwner;
}

export async function moveMoney(kind: MoneyMovementKind, input: MoneyMovementInput, keyScope = workflowInfo().workflowId, { tellCard = false, owner }: Telling = {}): Promise<MoneyMovementResult> {
  validateMoneyMovement(kind, input);
  const deadlineMs = input.timings?.deadlineMs ?? MONEY_DEADLINE_MS;
  const deadlineAt = Date.now() + deadlineMs;
  const purpose = kind === 'funding' ? 'fund' : 'wdr';
  const derivedKey = input.idempotencyKey === undefined;
  let idempotencyKey = input.idempotencyKey ?? idempotencyKeyFor(purpose, keyScope);
  // Each call may take what is left of the deadline, retries included.
  const acts = () => providerCalls(kind, { retry: moneyRetry, idempotencyKey, scheduleToCloseTimeout: Math.max(1000, deadlineAt - Date.now()) });
  // A key derived from the workflow ID: a restart of that ID looks for an earlier run's key first (activities/earlier-key.ts).
  const keyOrigin = derivedKey && keyScope === workflowInfo().workflowId ? { keyOrigin: { purpose, workflowId: keyScope } } : {};
  // The activity that sees the movement COMPLETED tells the card workflow (activities/funding.ts): no signal command, no workflow task for its answer.
  const telling = tellCard ? { tellCard: { workflowId: workflowInfo().workflowId } } : {};
  // Recorded before the first POST (activities/attempts.ts): no stop of this run or update leaves the movement without a record.
  const attempt: AttemptOf = {
    owner: owner ?? { workflowId: workflowInfo().workflowId, runId: workflowInfo().runId },
    flowKind: kind === 'funding' ? 'fundCard' : 'withdrawFromCard',
    ...(input.timings?.pollMaxIntervalMs ? { watchMs: input.timings.pollMaxIntervalMs } : {}),
    ...cadenceOf(input.timings),
  };
  const request = { kind, cardId: input.cardId, amount: input.amount, idempotencyKey, ...keyOrigin, ...telling, attempt };
  const unsettled = (lastStatus: string): never =>
    failWith(
      FailureType.OutcomeUnknown,
      `${kind} under key ${idempotencyKey} was not settled by the provider within its deadline (${deadlineMs} ms; last status ${lastStatus}): it stays an open item until the provider's final word or an operator's settlement (starter open; starter settle ${idempotencyKey}); do not try again under a new key before it is settled`,
      [{ idempotencyKey, cardId: input.cardId, amount: input.amount, lastStatus, deadlineMs, mayHaveTakenEffect: true }],
    );

  let outcome = await acts().moveMoney(request);
  // A restart continues under the key its earlier run used.
  idempotencyKey = outcome.idempotencyKey ?? idempotencyKey;
  let interval = input.timings?.pollInitialIntervalMs ?? 1000;
  // PROCESSING, or a status the spec does not show: not final, so asked again until the deadline.
  let shown: string | undefined;
  while (phaseOf('operation', outcome.status) === 'pending') {
    // Once per status it shows (log, search attribute, counter).
    if (isUnknownStatus('operation', outcome.status) && outcome.status !== shown) recordUnknownStatus('operation', idempotencyKey, (shown = outcome.status));
    if (Date.now() + interval > deadlineAt) unsettled(outcome.status);
    await sleep(interval);
    interval = Math.min(interval * 2, input.timings?.pollMaxIntervalMs ?? DEFAULT_TIMINGS.pollMaxIntervalMs);
    const lastStatus = outcome.status;
    outcome = await readAfterEffect(() => acts().getOperation({ idempotencyKey, attemptOwner: attempt.owner, ...(tellCard ? { cardId: input.cardId, ...telling } : {}) }), `${kind} under key ${idempotencyKey}`, { idempotencyKey, cardId: input.cardId, amount: input.amount, lastStatus });
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

/**
 * The body of the fundCard and withdrawFromCard workflows: searchable by card, then the movement,
 * whose activity tells the card workflow once it sees it COMPLETED.
 */
export async function moneyMovementFlow(kind: MoneyMovementKind, input: MoneyMovementInput): Promise<MoneyMovementResult> {
  const cardId = typeof input?.cardId === 'string' && input.cardId ? [{ key: CARD_ID, value: input.cardId }] : [];
  upsertSearchAttributes([{ key: FLOW_KIND, value: kind === 'funding' ? 'fundCard' : 'withdrawFromCard' }, ...cardId]);
  return moveMoney(kind, input, workflowInfo().workflowId, { tellCard: true });
}
