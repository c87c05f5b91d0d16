/**
 * Every call of the client takes `{ timeout, signal }` (issue 30): a call that gets no answer in
 * time, or whose signal the caller aborts, fails with a CardIssuingError naming what it waited
 * for (the task queue no worker polls, the flow still running) instead of hanging. The gRPC calls
 * under it are cancelled through the connection's abort signal, so nothing keeps waiting behind.
 */
import type { ConnectionLike } from '@temporalio/client';
import { CardIssuingError, type FailureContext } from './errors';

/** What every call of the client takes: how long to wait for its answer, and a signal that ends the wait. */
export interface CallOptions {
  /** Milliseconds to wait for the answer (a positive integer); reads have a default, money calls wait as long as the flow runs. */
  timeout?: number;
  /** Aborts the wait (the flow itself goes on: `cancel()` stops it). */
  signal?: AbortSignal;
}

/** How long a read waits by default: a read with no worker polling fails after this, naming the queue. */
export const DEFAULT_READ_TIMEOUT_MS = 30_000;

export interface CallScope extends FailureContext {
  /** What the call waits for, for the message: "a worker on task queue card-issuing". */
  waitingFor: string;
  /** Whether money may have moved when the wait is cut (a money call already sent). */
  mayHaveTakenEffect?: boolean;
}

export function timeoutErrors(opts: CallOptions | undefined): Record<string, string> {
  const t = opts?.timeout;
  if (t === undefined || (Number.isInteger(t) && t > 0)) return {};
  return { timeout: 'must be a positive integer of milliseconds' };
}

/** Runs `fn` within the call's timeout (or `defaultTimeout`) and signal. */
export async function withinCall<T>(connection: ConnectionLike, opts: CallOptions | undefined, scope: CallScope, fn: () => Promise<T>, defaultTimeout?: number): Promise<T> {
  const errors = timeoutErrors(opts);
  if (Object.keys(errors).length > 0) throw new CardIssuingError({ type: 'ValidationFailed', message: `timeout ${errors.timeout}`, details: [{ errors }] });
  const timeout = opts?.timeout ?? defaultTimeout;
  const signals = [opts?.signal, timeout === undefined ? undefined : AbortSignal.timeout(timeout)].filter((s): s is AbortSignal => s !== undefined);
  if (signals.length === 0) return fn();
  const signal = signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  const cut = (cause?: unknown) => {
    const aborted = opts?.signal?.aborted === true;
    const { waitingFor, mayHaveTakenEffect, ...context } = scope;
    return new CardIssuingError({
      type: aborted ? 'Aborted' : 'ClientTimeout',
      message: aborted ? `the call was aborted while waiting for ${waitingFor}` : `no answer within ${timeout} ms while waiting for ${waitingFor}`,
      ...context,
      mayHaveTakenEffect: mayHaveTakenEffect ?? false,
      cause,
    });
  };
  if (signal.aborted) throw cut();
  try {
    return await connection.withAbortSignal(signal, fn);
  } catch (err) {
    if (signal.aborted) throw cut(err);
    throw err;
  }
}
