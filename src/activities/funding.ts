/**
 * Funding and withdrawal (POST /cards/{cardId}/funding and /withdrawal; idempotent by the spec,
 * key durable with no expiry). A call that may have taken effect is never repeated blindly: a
 * retry first asks GET /operations/{key} what became of the earlier attempt, and only when the
 * provider has no record of the key does it POST again, under the same key.
 *
 * | case | what happens |
 * |---|---|
 * | key | the caller's, else derived from the workflow ID or the card update's ID (workflows/lib/money-movement.ts) |
 * | spec | idempotent: key optional, durable with no expiry; 409 for another body or card, while in progress, or after a definitive failure |
 * | retry, worker crash, 5xx, timeout | the next attempt reads GET /operations/{key} first (a heartbeat note clears only the attempt right after it); POSTs again under the same key when the provider has no record |
 * | re-scheduled after a 429 (a new activity, attempt 1) | the workflow says `sentBefore`: it reconciles first, as a retry does |
 * | answer cut off or unreadable | GET /operations/{key} at once: a record naming our card and amount completes (or fails); no record, or one that names neither: asked again, then posted under the same key |
 * | record under the key shows only a status (the spec's minimum) | not taken as ours: the same POST under the key answers the original (ours) or 409 (another request's: IdempotencyConflict) |
 * | record names another card or amount | not taken as ours, and not as another's: the spec defines none of its fields beyond the status (a fee-inclusive amount is no conflict), so the same POST under the key decides: the original answer (ours) or 409 (IdempotencyConflict) |
 * | the confirming POST after one that may have taken effect is refused (403 from an egress IP dropped from the allow-list; 404, 400, 422, InsufficientFunds from a provider that validates before it replays the key) | OutcomeUnknown with the key, `mayHaveTakenEffect: true`, and the open item: the refusal says nothing of the earlier attempt (issue 51, case 1; idempotent-post.ts) |
 * | 409 we cannot read | in progress: the retry reconciles, then asks again; bounded by the movement's deadline (then OutcomeUnknown) |
 * | GET /operations fails after a call that may have taken effect | 5xx, timeout, 429: retried, reconciling first; 403 or any other refusal: OutcomeUnknown with the key, `mayHaveTakenEffect: true` |
 * | restart of the workflow ID after a deploy | before its first POST, a run whose key is derived asks under every key any version could have derived, its own included (earlier-key.ts), and continues under the one the provider knows, confirmed as any recalled record is; with no record anywhere, only an earlier run that scheduled the POST picks its key (FNV if it had no SHA-256 marker) |
 * | same key, other amount or card | the provider answers 409 (IdempotencyConflict); the card workflow refuses it before any call |
 * | restart after a read-after-write 404 under an earlier version's FNV key | that key is kept (earlier-key.ts) and the POST under it answers the original: funded once |
 * | PROCESSING, then the workflow's poll of the key fails for good (403, 404) | OutcomeUnknown with the key, card, amount and last status (workflows/lib/provider.ts readAfterEffect), never the read's type |
 * | `timings` past a day, or not a positive integer | ValidationFailed naming `timings.<field>` before any call (a deadline of a month would hold the card's freeze and delete for a month) |
 * | telling the card workflow (standalone flows under money-flow-one-marker) | after COMPLETED, from the activity, bounded to 3 s; never fails the activity (the money has moved, and a retry would only reconcile and answer COMPLETED again); a lost tell leaves the card's view stale until its next read or reconcile-cards, moves nothing |
 * | a deploy while a movement runs (Worker Deployments, docs/versioning.md) | a standalone fundCard/withdrawFromCard is pinned: it ends on the build that started it, its activities on that build's workers, under the key fixed before its first POST; a card workflow's movement moves to the new build and replays its markers, so its key and deadline are those it already recorded |
 * | the flow or card update cannot say what moved (deadline while PROCESSING, a read refused after the effect, cancelled, terminated, timed out) | it fails with `mayHaveTakenEffect: true` and an open item holds it (`open-item/<owner>`, shared/open-items.ts): asked under every key it could have used until the provider's final word, with no look-back, or an operator's `settle` (a terminated or timed-out one gets its item from the first reconcile-money run that lists it); the typed client's repeat of the same call answers from the closed item |
 */
import type { Client } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { entityWorkflowId } from '../shared/ids';
import { cardMoneyMovedSignal } from '../shared/messages';
import { addressed } from '../shared/signal-origin';
import type { ProviderClient } from '../provider/client';
import { isProviderError } from '../provider/errors';
import type { OperationAnswer } from '../provider/answers';
import { classifyMessage } from '../provider/classification';
import { phaseOf } from '../shared/statuses';
import type { MoneyMovementKind } from '../shared/types';
import type { AttemptOf, OpenItemOwner } from '../shared/open-items';
import { recordAttempt, tellAttempt, type AttemptDeps } from './attempts';
import { operationOfEarlierRun, type KeyOrigin } from './earlier-key';
import { contradicts, fromOperation, postReconcilingFirst, readAfterEffect, readOperation, type Recalled } from './idempotent-post';
import { providerCall } from './provider-call';

export interface OperationOutcome {
  /** The provider's word (PROCESSING, COMPLETED, FAILED, or one the spec does not show); shared/statuses.ts reads it. */
  status: string;
  operationId?: string;
  failureReason?: string;
  /** Our failure type for a FAILED operation whose reason we recognise (e.g. InsufficientFunds). */
  failureType?: string;
  /** Set when the movement continues under an earlier run's key (a restart after a deploy): polls use it. */
  idempotencyKey?: string;
}

export interface MoveMoneyRequest {
  kind: MoneyMovementKind;
  cardId: string;
  amount: number;
  idempotencyKey: string;
  /** Present when the key was derived from the workflow ID: a restart looks for an earlier run's key. */
  keyOrigin?: KeyOrigin;
  /** The workflow scheduled this movement's POST before (workflows/lib/provider.ts SentBefore). */
  sentBefore?: boolean;
  /** A standalone flow (marker money-flow-one-marker): the activity that sees the movement COMPLETED tells the card workflow. */
  tellCard?: TellCard;
  /** Recorded before the first POST, told the provider's final word (activities/attempts.ts). */
  attempt?: AttemptOf;
}

export interface TellCard {
  /** The flow's workflow ID, as the card workflow's cardMoneyMoved signal carries it. */
  workflowId: string;
}

export function createFundingActivities({ provider, temporal, openItemMinAskMs }: { provider: ProviderClient } & AttemptDeps) {
  return {
    async moveMoney(req: MoveMoneyRequest): Promise<OperationOutcome> {
      const outcome = await providerCall(async () => {
        const earlier = await operationOfEarlierRun(temporal, provider, req, 'moveMoney');
        // A restart continues under the key its earlier run used, which is confirmed as any recalled record is.
        const key = earlier?.idempotencyKey ?? req.idempotencyKey;
        const spec = { idempotencyKey: key, endpoint: req.kind === 'funding' ? 'POST /cards/{cardId}/funding' : 'POST /cards/{cardId}/withdrawal' };
        const outcome = await postReconcilingFirst({
          ...spec,
          idempotentBySpec: true,
          sentBefore: req.sentBefore === true || earlier !== undefined,
          beforeSend: req.attempt && (() => recordAttempt({ temporal, openItemMinAskMs }, req.attempt!, { idempotencyKey: key, cardId: req.cardId, amount: req.amount })),
          recall: earlier?.operation ? async () => recalled(req, key, earlier.operation!) : fromOperation(provider, key, (op) => recalled(req, key, op)),
          post: async () => {
            const call = req.kind === 'funding' ? provider.fundCard.bind(provider) : provider.withdrawFromCard.bind(provider);
            const answer = await call(req.cardId, { amount: req.amount }, { idempotencyKey: key });
            if (answer.success === true) return { status: 'COMPLETED', operationId: answer.operationId };
            // Not a plain success: the record of the key our POST was just answered under says what happened.
            const recorded = await readAfterEffect(spec, () => readOperation(provider, key));
            if (recorded) return outcomeOf(recorded);
            return answer.success === false ? failed(answer.message) : { status: 'PROCESSING' };
          },
        });
        return earlier ? { ...outcome, idempotencyKey: key } : outcome;
      });
      if (req.tellCard) await tellCardIfCompleted(temporal, req.cardId, req.tellCard, outcome);
      await tellAttempt(temporal, req.attempt?.owner, 'operation', outcome.status);
      return outcome;
    },

    /**
     * Whose is the record under the key (an open item's question, issue 51): the same POST under the key
     * answers the original (ours) or 409 (another request's), the one test the spec gives. Asked only
     * once the provider shows a record under the key, so the POST can only replay it, never move money.
     */
    async confirmOperationOwner({ kind, cardId, amount, idempotencyKey }: Pick<MoveMoneyRequest, 'kind' | 'cardId' | 'amount' | 'idempotencyKey'>): Promise<'ours' | 'another'> {
      return providerCall(async () => {
        const call = kind === 'funding' ? provider.fundCard.bind(provider) : provider.withdrawFromCard.bind(provider);
        try {
          await call(cardId, { amount }, { idempotencyKey });
          return 'ours';
        } catch (err) {
          if (isProviderError(err, 'IdempotencyConflict')) return 'another';
          throw err;
        }
      });
    },

    /** NOT_FOUND (not a status the spec shows, so not final) when the provider does not know the key yet: read-after-write lag waits for the deadline. */
    async getOperation({ idempotencyKey, cardId, tellCard, attemptOwner }: { idempotencyKey: string; cardId?: string; tellCard?: TellCard; attemptOwner?: OpenItemOwner }): Promise<OperationOutcome> {
      const outcome = await providerCall(async () => {
        const op = await readOperation(provider, idempotencyKey);
        return op ? outcomeOf(op) : ({ status: 'NOT_FOUND' } as OperationOutcome);
      });
      if (tellCard && cardId) await tellCardIfCompleted(temporal, cardId, tellCard, outcome);
      await tellAttempt(temporal, attemptOwner, 'operation', outcome.status);
      return outcome;
    },
  };
}

/**
 * Tells the card's workflow that a standalone movement completed, so it reads its balance again
 * (workflows/lib/card-balance.ts), as the workflow's signal did before marker money-flow-one-marker.
 * The money has moved: nothing here may fail the activity (a retry would only tell again, which the
 * card's coalesced reads absorb). No card workflow running: nobody to tell.
 */
const TELL_DEADLINE_MS = 3000;

async function tellCardIfCompleted(temporal: Client, cardId: string, tell: TellCard, outcome: OperationOutcome): Promise<void> {
  if (phaseOf('operation', outcome.status) !== 'succeeded') return;
  try {
    // Bounded: the call's heartbeats stopped with it, and a view's refresh is not worth the activity's heartbeat timeout.
    await temporal.connection.withDeadline(Date.now() + TELL_DEADLINE_MS, () =>
      temporal.workflow.getHandle(entityWorkflowId('card', cardId)).signal(cardMoneyMovedSignal, addressed(entityWorkflowId('card', cardId), { workflowId: tell.workflowId })),
    );
  } catch (err) {
    const missing = (err as Error)?.name === 'WorkflowNotFoundError';
    Context.current().log[missing ? 'info' : 'warn']('card workflow not told of the movement', { cardId, error: (err as Error).message });
  }
}

/**
 * A record found under our key is ours when it names our card and amount (and, when it shows a
 * type, our kind); when it names another card or amount, the key was used for another request.
 * A record that shows neither (the spec shows only `status`) is not taken as ours: the POST under
 * the same key confirms it (idempotent-post.ts).
 */
/**
 * A record under our key whose fields name our card and amount is ours. One whose fields name
 * others is not shown to be ours, and is not shown to be another's either: the spec defines no field
 * of it beyond the status (a provider may show a fee-inclusive amount), so only the one test the spec
 * gives decides: the same POST under the key answers the original (ours) or 409 (another request's,
 * IdempotencyConflict).
 */
function recalled(req: MoveMoneyRequest, idempotencyKey: string, op: OperationAnswer): Recalled<OperationOutcome> {
  if (contradicts(op, { cardId: req.cardId, amount: req.amount })) return { outcome: outcomeOf(op), ours: false };
  const kindShown = op.type === undefined || op.type === null || new RegExp(req.kind === 'funding' ? 'fund' : 'withdraw', 'i').test(op.type);
  // A FAILED record moved nothing, whoever made it: the key is terminal for this request either way.
  const failed = phaseOf('operation', op.status) === 'failed';
  return { outcome: outcomeOf(op), ours: failed || (op.cardId === req.cardId && op.amount === req.amount && kindShown) };
}

/**
 * The operation as the provider records it: the spec shows its `status` (and `operationId`), so
 * that is all that is read. COMPLETED completes the movement with whatever ids are shown (none is
 * fine); nothing else it may show (a type, a card, an amount) is compared, since the spec does not
 * name those fields: a provider that words them otherwise must not turn a safe retry into a conflict.
 */
function outcomeOf(op: OperationAnswer): OperationOutcome {
  return { status: op.status, ...(op.operationId ? { operationId: op.operationId } : {}), ...failureOf(op) };
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
