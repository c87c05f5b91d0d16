/**
 * How the typed client reads (client.ts): within the call's timeout (30 s unless told), failing with
 * the queue it waited on; a read of the provider runs as a short workflow on a worker, since callers
 * hold no provider credentials, bounded by the same timeout on the server so none lingers without a
 * worker.
 */
import type { Client } from '@temporalio/client';
import type { FlowName } from '../shared/failures';
import { DEFAULT_READ_TIMEOUT_MS, withinCall, type CallOptions } from './calls';
import { asCardIssuingError } from './errors';
import { readableId } from './requests';

export class Reads {
  readonly #temporal: Client;
  readonly #taskQueue: string;

  constructor(temporal: Client, taskQueue: string) {
    this.#temporal = temporal;
    this.#taskQueue = taskQueue;
  }

  /** A read: within its timeout, failing with the queue it waited on. */
  read<T>(opts: CallOptions | undefined, context: { workflowId?: string; mayHaveTakenEffect?: boolean }, fn: () => Promise<T>): Promise<T> {
    const { mayHaveTakenEffect, ...ids } = context;
    const waitingFor = `a worker on task queue ${this.#taskQueue}${ids.workflowId ? ` (${ids.workflowId})` : ''}`;
    return withinCall(this.#temporal.connection, opts, { ...ids, waitingFor, mayHaveTakenEffect }, () => asCardIssuingError(fn(), ids), DEFAULT_READ_TIMEOUT_MS);
  }

  /** A read that runs as a short workflow, under a readable ID of `prefix`. */
  flow<R>(workflowType: FlowName, prefix: string, opts?: CallOptions): Promise<R> {
    return this.flowWith<R>(workflowType, readableId(prefix), [], opts);
  }

  /** flow() with the workflow's ID and input given. */
  async flowWith<R>(workflowType: FlowName, workflowId: string, args: unknown[], opts?: CallOptions): Promise<R> {
    const timeout = opts?.timeout ?? DEFAULT_READ_TIMEOUT_MS;
    return this.read({ ...opts, timeout }, { workflowId }, async () => {
      const handle = await this.#temporal.workflow.start<(...input: unknown[]) => Promise<R>>(workflowType, { taskQueue: this.#taskQueue, workflowId, args, workflowExecutionTimeout: timeout });
      return handle.result();
    });
  }
}
