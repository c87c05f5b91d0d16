/**
 * How the typed client operates on a card (and an eSIM) through its entity workflow: an
 * Update-with-Start that starts the workflow if no run is open, sent again under one update ID when
 * the server refuses it transiently (update-with-start.ts). A money update's ID comes from the
 * caller's key and the amount, so a retry of the same call joins the first; one that ended
 * OutcomeUnknown is answered by its open item once that has closed (settled-updates.ts).
 */
import { WithStartWorkflowOperation, WorkflowUpdateStage, type Client, type Workflow, type WorkflowUpdateHandle } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { temporal as proto } from '@temporalio/proto';
import { describeErrors, hasErrors, keyErrors } from '../shared/card-rules';
import { entityWorkflowId } from '../shared/ids';
import { entityQueue } from '../shared/entity-queues';
import type { fundCardUpdate } from '../shared/messages';
import { withStableUpdateId } from './update-with-start';
import { CardIssuingError, asCardIssuingError } from './errors';
import { DEFAULT_READ_TIMEOUT_MS, withinCall, type CallOptions } from './calls';
import { answeredByItem } from './settled-updates';
import type { MoneyMovementRequest, MoneyUpdateResult } from './requests';
import type { SubmittedMovement } from './flow-types';

const UpdateStage = proto.api.enums.v1.UpdateWorkflowExecutionLifecycleStage;

type MoneyUpdate = typeof fundCardUpdate;
type Verb = 'fund' | 'withdraw';

export class CardUpdates {
  readonly #temporal: Client;
  readonly #taskQueue: string;

  constructor(temporal: Client, taskQueue: string) {
    this.#temporal = temporal;
    this.#taskQueue = taskQueue;
  }

  /** A card update, its workflow started if no run of it is open, so an operation never misses it. */
  card<Ret, Args extends unknown[]>(cardId: string, update: UpdateDefinition<Ret, Args>, args: Args, updateId?: string): Promise<Ret> {
    return this.#withStart(update, args, () => this.#start('cardLifecycle', entityWorkflowId('card', cardId), { cardId }), updateId);
  }

  /** An update of another entity's workflow (an eSIM's), started likewise. */
  entity<Ret, Args extends unknown[]>(kind: 'esim', entityId: string, update: UpdateDefinition<Ret, Args>, args: Args): Promise<Ret> {
    return this.#withStart(update, args, () => this.#start('providerEntity', entityWorkflowId(kind, entityId), { kind, entityId }));
  }

  /** A card money update, waited for: its result, or its open item's record once the item closed. */
  async money(update: MoneyUpdate, verb: Verb, input: MoneyMovementRequest, opts?: CallOptions): Promise<MoneyUpdateResult> {
    const { cardId, args, updateId, context } = moneyRequest(verb, input);
    const scope = { ...context, waitingFor: `the ${verb} of card ${cardId} on task queue ${entityQueue(this.#taskQueue)}`, mayHaveTakenEffect: true };
    const request = { cardId, amount: args.amount, idempotencyKey: args.idempotencyKey };
    const result = await withinCall(this.#temporal.connection, opts, scope, () =>
      asCardIssuingError(this.card(cardId, update, [args], updateId), context).catch((err: unknown) => answeredByItem(this.#temporal, err, { workflowId: context.workflowId, updateId }, request)),
    );
    return { ...result, updateId };
  }

  /**
   * A card money update sent until the card's workflow accepted it. Its update ID is money()'s
   * (the key and the amount), so the waiting call joins it (test/client: submitted, then joined).
   */
  async submitMoney(update: MoneyUpdate, verb: Verb, input: MoneyMovementRequest, opts?: CallOptions): Promise<SubmittedMovement> {
    const { cardId, args, updateId, context } = moneyRequest(verb, input);
    const scope = { ...context, waitingFor: `card ${cardId} to accept the ${verb} on task queue ${entityQueue(this.#taskQueue)}`, mayHaveTakenEffect: true };
    const accepted = async (id: string) => {
      const startWorkflowOperation = this.#start('cardLifecycle', context.workflowId, { cardId });
      const handle = await this.#temporal.workflow.startUpdateWithStart(update, { args: [args], updateId: id, waitForStage: WorkflowUpdateStage.ACCEPTED, startWorkflowOperation });
      await this.#refusal(handle);
    };
    await withinCall(this.#temporal.connection, opts, scope, () => asCardIssuingError(withStableUpdateId(updateId, accepted), context), DEFAULT_READ_TIMEOUT_MS);
    return { workflowId: context.workflowId, updateId, idempotencyKey: args.idempotencyKey };
  }

  /**
   * An update the workflow's validator refused comes back from a start "accepted or rejected" with
   * its failure, which the SDK's handle keeps to itself, and is not kept by the server: asked
   * whether it was accepted, the server knows no such update. Then its (known) outcome is thrown.
   */
  async #refusal(handle: WorkflowUpdateHandle<unknown>): Promise<void> {
    try {
      await this.#temporal.workflowService.pollWorkflowExecutionUpdate({
        namespace: this.#temporal.options.namespace,
        updateRef: { workflowExecution: { workflowId: handle.workflowId, runId: handle.workflowRunId }, updateId: handle.updateId },
        identity: this.#temporal.options.identity,
        waitPolicy: { lifecycleStage: UpdateStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED },
      });
    } catch (err) {
      if ((err as { code?: number }).code !== GrpcStatus.NOT_FOUND) throw err;
      await handle.result();
    }
  }

  /** The entity workflow started if no run of it is open (one start operation is spent per try). */
  #start(workflowType: string, workflowId: string, input: Record<string, unknown>): WithStartWorkflowOperation<Workflow> {
    return new WithStartWorkflowOperation<Workflow>(workflowType, { workflowId, taskQueue: entityQueue(this.#taskQueue), args: [input], workflowIdConflictPolicy: 'USE_EXISTING' });
  }

  /**
   * Every try under one update ID and with a start operation of its own: a try the server refused
   * because the workflow was rolling over is sent again (update-with-start.ts).
   */
  #withStart<Ret, Args extends unknown[]>(update: UpdateDefinition<Ret, Args>, args: Args, start: () => WithStartWorkflowOperation<Workflow>, updateId?: string): Promise<Ret> {
    return withStableUpdateId(updateId, (id) => this.#temporal.workflow.executeUpdateWithStart(update, { args, startWorkflowOperation: start(), updateId: id }));
  }
}

/**
 * A money request checked (a card and the caller's key are required) and its update ID. The amount is
 * part of the ID: the same key with another amount is not taken for a repeat of the first call
 * (Temporal answers a known update ID without asking the workflow), but reaches the card workflow,
 * which refuses it IdempotencyConflict.
 */
function moneyRequest(verb: Verb, input: MoneyMovementRequest) {
  const { cardId, ...args } = input;
  const errors = { ...(typeof cardId === 'string' && cardId ? {} : { cardId: 'is required' }), ...(typeof args.idempotencyKey === 'string' ? keyErrors(args.idempotencyKey) : { idempotencyKey: 'is required' }) };
  if (hasErrors(errors)) throw new CardIssuingError({ type: 'ValidationFailed', message: `invalid ${verb}: ${describeErrors(errors)}`, details: [{ errors }] });
  const updateId = `${verb}-key-${args.idempotencyKey}/${args.amount}`;
  return { cardId, args, updateId, context: { workflowId: entityWorkflowId('card', cardId), updateId, idempotencyKey: args.idempotencyKey } };
}
