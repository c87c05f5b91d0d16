/**
 * How the typed client starts or joins a flow under its workflow ID (client.ts): the request digest
 * in the run's memo that refuses another request under the same ID, the reuse policy that lets a new
 * run follow one that closed without a result, a run that ended unsure answering a repeat from its
 * open item instead of a new run (issue 51, item 5), and the handle a caller follows the run with.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { FailureType, type FlowName } from '../shared/failures';
import { describeFlow } from '../temporal/flow-status';
import { itemStateOf } from '../temporal/open-items';
import { DEFAULT_READ_TIMEOUT_MS, withinCall, type CallOptions } from './calls';
import { CardIssuingError, asCardIssuingError, toCardIssuingError, type FailureContext } from './errors';
import { runAnsweredByItem } from './settled-updates';
import { REQUEST_DIGEST_MEMO, requestDigest, type FlowHandle } from './requests';

export class FlowStarts {
  readonly #temporal: Client;
  readonly #taskQueue: string;

  constructor(temporal: Client, taskQueue: string) {
    this.#temporal = temporal;
    this.#taskQueue = taskQueue;
  }

  /**
   * A caller's handle on one run: its result, state and cancellation, each within the call's options.
   * Under a caller's key, a result that may have taken effect is answered by the run's open item once
   * there is one (settled-updates.ts): the call and every repeat of it are told the same.
   */
  handle<R, F extends FlowName>(workflowId: string, runId: string, handle: WorkflowHandle<() => Promise<R>>, idempotencyKey?: string): FlowHandle<R, F> {
    const context = { workflowId, ...(idempotencyKey ? { idempotencyKey } : {}) };
    const within = <T>(opts: CallOptions | undefined, what: string, fn: () => Promise<T>, defaultTimeout?: number) =>
      withinCall(this.#temporal.connection, opts, { ...context, waitingFor: what, mayHaveTakenEffect: idempotencyKey !== undefined }, () => asCardIssuingError(fn(), context), defaultTimeout);
    const result = () => {
      const ended = asCardIssuingError(handle.result(), context);
      return idempotencyKey && runId ? ended.catch((err: unknown) => runAnsweredByItem<R>(this.#temporal, err, { workflowId, runId }, idempotencyKey)) : ended;
    };
    return {
      workflowId,
      runId,
      result: (opts) => within(opts, `the result of ${workflowId}`, result),
      describe: (opts) => within(opts, `the state of ${workflowId}`, () => describeFlow(handle), DEFAULT_READ_TIMEOUT_MS),
      cancel: async (opts) => within(opts, `the cancellation of ${workflowId}`, async () => void (await handle.cancel()), DEFAULT_READ_TIMEOUT_MS),
    };
  }

  /**
   * Starts a flow under its workflow ID, or joins the one there. Each run carries a digest of its
   * input in its memo: a repeated start that asks for another thing is refused IdempotencyConflict
   * before anything starts; one that asks for the same thing follows the run there while it runs or
   * once it completed (its result). Under a caller's key, a run that failed in a way that may have
   * moved money, whose open item exists (open, or closed with its record), is followed too: its
   * result is answered from the item, and no second run (no second item) is started (issue 51, item
   * 5). Any other run that closed without a result (a definitive failure, a failed run with no item,
   * one terminated, cancelled or timed out) is followed by a new run, which first reconciles what the
   * earlier one may have moved (docs/idempotency.md, "A restart"): a run lost mid-call is recovered
   * by its restart (the same card under the same key), which an unsure failure could not be.
   */
  async start<I, R, F extends FlowName>(workflowType: F, workflowId: string, input: I, opts?: CallOptions, idempotencyKey?: string, digestInput: unknown = input): Promise<FlowHandle<R, F>> {
    // What is compared, not what is sent: a sealed PIN differs on every sealing (PIN_IN_DIGEST).
    const digest = requestDigest(workflowType, digestInput);
    const context = { workflowId, ...(idempotencyKey ? { idempotencyKey } : {}) };
    const follow = (runId: string) => this.handle<R, F>(workflowId, runId, this.#temporal.workflow.getHandle(workflowId, runId), idempotencyKey);
    /** The run there, when it asked for the same thing (undefined: none there); another request's is refused. */
    const sameRequestThere = async () => {
      const there = await this.#temporal.workflow
        .getHandle(workflowId)
        .describe()
        .catch((err: unknown) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err)));
      const theirs = there?.memo?.[REQUEST_DIGEST_MEMO];
      if (theirs !== undefined && theirs !== digest) {
        throw new CardIssuingError({
          type: FailureType.IdempotencyConflict,
          message: `${workflowId} was started for another request${idempotencyKey ? ` under key ${idempotencyKey}` : ''}; this one was not started (use a new key for a new request)`,
          ...context,
          details: [{ workflowId }],
        });
      }
      return there;
    };
    return withinCall(this.#temporal.connection, opts, { ...context, waitingFor: `the start of ${workflowId}` }, async () => {
      const there = idempotencyKey ? await sameRequestThere() : undefined;
      if (there && (there.status.name === 'RUNNING' || there.status.name === 'COMPLETED')) return follow(there.runId);
      if (there?.status.name === 'FAILED' && idempotencyKey && (await this.#answeredByItem(workflowId, there.runId, context))) return follow(there.runId);
      try {
        const handle = await this.#temporal.workflow.start<(input: I) => Promise<R>>(workflowType, {
          taskQueue: this.#taskQueue,
          workflowId,
          args: [input],
          memo: { [REQUEST_DIGEST_MEMO]: digest },
          workflowIdConflictPolicy: 'FAIL',
          workflowIdReusePolicy: idempotencyKey ? 'ALLOW_DUPLICATE_FAILED_ONLY' : 'ALLOW_DUPLICATE',
        });
        return follow(handle.firstExecutionRunId);
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw toCardIssuingError(err, context);
        // Another start won the race (or the run there completed meanwhile): follow it, if it asked for the same thing.
        const winner = await sameRequestThere();
        if (!winner) throw toCardIssuingError(err, context);
        return follow(winner.runId);
      }
    });
  }

  /**
   * Whether the failed run there failed in a way that may have taken effect and has its open item
   * (open, or closed with its record): then a repeat is answered from the item, never by a new run
   * that would post again, or end unsure as a second item of the same movement (issue 51, item 5).
   */
  async #answeredByItem(workflowId: string, runId: string, context: FailureContext): Promise<boolean> {
    const end = await asCardIssuingError(this.#temporal.workflow.getHandle(workflowId, runId).result(), context).then(
      () => undefined,
      (err: unknown) => err,
    );
    if (!(end instanceof CardIssuingError) || !end.mayHaveTakenEffect) return false;
    return (await itemStateOf(this.#temporal, { workflowId, runId })) !== undefined;
  }
}
