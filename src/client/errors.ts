/**
 * The one error a caller of the client catches (issue 30): every failure of a flow, an update, a
 * start refused, or a call that ran out of time arrives as a CardIssuingError whose `type` says
 * which, with the ids to look at or retry with and whether money may have moved. `type` is one
 * of the flow's declared failure types (shared/failures.ts, FLOW_FAILURES) or one the client
 * raises itself (CLIENT_FAILURES), so `switch (err.type)` is checked by the compiler.
 */
import { CancelledFailure, TerminatedFailure, TimeoutFailure, ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ANY_FLOW_FAILURES, FLOW_FAILURES, type FlowFailureType, type FlowName } from '../shared/failures';
import { mayHaveTakenEffectOf } from '../shared/outcome-unknown';

/**
 * Failures the client raises itself: a call that got no answer within its timeout (no worker polls
 * the queue, or the flow is still running), a call its signal aborted, a flow that was cancelled,
 * terminated or timed out, a workflow ID no flow has, and a flow whose run ended unsure and whose
 * open item has since closed MOVED (`SettledMoved`: it moved, `mayHaveTakenEffect: true`, but the
 * run's result cannot be rebuilt from the item's record, which its details name: settled-updates.ts).
 */
export const CLIENT_FAILURES = ['ClientTimeout', 'Aborted', 'FlowCancelled', 'FlowTerminated', 'FlowTimedOut', 'FlowNotFound', 'SettledMoved'] as const;
/** One of CLIENT_FAILURES: a failure the client raises itself rather than a flow. */
export type ClientFailureType = (typeof CLIENT_FAILURES)[number];

/** What a call of flow F can fail with. */
export type FlowError<F extends FlowName> = FlowFailureType<F> | ClientFailureType;

/** What a CardIssuingError is made from; each field becomes the error's field of the same name. */
export interface CardIssuingErrorInit<T extends string> {
  /** The failure's type (CardIssuingError.type). */
  type: T;
  /** What happened, for people; never parsed (the type says which failure). */
  message: string;
  /** The flow the failure belongs to. */
  workflowId?: string;
  /** The card update the call was. */
  updateId?: string;
  /** The key the call was made under. */
  idempotencyKey?: string;
  /** Whether money may have moved; false when left out. */
  mayHaveTakenEffect?: boolean;
  /** The failure's details (the provider's field errors under `errors`, an open item's reference, …). */
  details?: unknown[];
  /** The error this one stands for (a Temporal failure), kept as the standard `cause`. */
  cause?: unknown;
}

/**
 * The one error the client's calls fail with: `type` names the failure (typed by isFailureOf),
 * `mayHaveTakenEffect` says whether money may have moved, and the ids say what to look at or repeat.
 */
export class CardIssuingError<T extends string = string> extends Error {
  /** Always `CardIssuingError`, whatever a minifier does to class names; test `type`, not the class. */
  override readonly name = 'CardIssuingError';
  /** Which failure: a flow's declared type (FLOW_FAILURES) or the client's own (CLIENT_FAILURES). */
  readonly type: T;
  /** The flow to look at, or to re-attach to (`client.flow(workflowId)`). */
  readonly workflowId?: string;
  /** The card update the call was: call again with the same key and it answers this one. */
  readonly updateId?: string;
  /** The key the call was made under: a retry under it joins the first. */
  readonly idempotencyKey?: string;
  /**
   * True when money may have moved although the call did not say so: retry under the same key, or
   * settle. False only when it is known that nothing moved: the provider stated a terminal failed
   * status or refused the request, or the request was refused before anything was sent.
   */
  readonly mayHaveTakenEffect: boolean;
  /** The failure's details as the flow gave them (field errors under `errors`). */
  readonly details: readonly unknown[];

  constructor(init: CardIssuingErrorInit<T>) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.type = init.type;
    this.details = init.details ?? [];
    this.mayHaveTakenEffect = init.mayHaveTakenEffect ?? false;
    if (init.workflowId !== undefined) this.workflowId = init.workflowId;
    if (init.updateId !== undefined) this.updateId = init.updateId;
    if (init.idempotencyKey !== undefined) this.idempotencyKey = init.idempotencyKey;
  }

  /** The provider's field errors (`details[i].errors`), when the failure names fields. */
  get fieldErrors(): Record<string, string> | undefined {
    const withErrors = this.details.find((d): d is { errors: Record<string, string> } => typeof d === 'object' && d !== null && 'errors' in d);
    return withErrors?.errors;
  }
}

/** True when `err` is a CardIssuingError (any type): a failure of ours, not a bug or a lost connection. */
export function isCardIssuingError(err: unknown): err is CardIssuingError {
  return err instanceof CardIssuingError;
}

/** True when `err` is a failure flow `flow` may end with (its declared types and the client's own): then `err.type` is typed. */
export function isFailureOf<F extends FlowName>(err: unknown, flow: F): err is CardIssuingError<FlowError<F>> {
  if (!(err instanceof CardIssuingError)) return false;
  const declared: readonly string[] = [...FLOW_FAILURES[flow], ...ANY_FLOW_FAILURES, ...CLIENT_FAILURES];
  return declared.includes(err.type);
}

/** Where a failure happened, for the error to name. */
export interface FailureContext {
  /** The flow the call started or acted on. */
  workflowId?: string;
  /** The card update the call was. */
  updateId?: string;
  /** The key the call was made under. */
  idempotencyKey?: string;
}

/**
 * The CardIssuingError for what a Temporal call threw: the flow's (or update's) ApplicationFailure,
 * or how the flow ended without one. Anything else (a connection error, a bug) goes up as it came.
 */
export function toCardIssuingError(err: unknown, context: FailureContext = {}): unknown {
  if (err instanceof CardIssuingError) return err;
  const cause = err instanceof WorkflowFailedError || err instanceof WorkflowUpdateFailedError ? err.cause : err;
  if (cause instanceof ApplicationFailure) return fromApplicationFailure(cause, context, err);
  const ended = cause instanceof CancelledFailure ? 'FlowCancelled' : cause instanceof TerminatedFailure ? 'FlowTerminated' : cause instanceof TimeoutFailure ? 'FlowTimedOut' : undefined;
  if (ended && (err instanceof WorkflowFailedError || err instanceof WorkflowUpdateFailedError)) {
    // A flow stopped from outside may have moved money before it stopped.
    return new CardIssuingError({ type: ended, message: `${context.workflowId ?? 'the flow'} was ${ended.slice(4).toLowerCase()}: ${(cause as Error).message}`, ...context, mayHaveTakenEffect: true, cause: err });
  }
  return err;
}

function fromApplicationFailure(failure: ApplicationFailure, context: FailureContext, original: unknown): CardIssuingError {
  const details = [...(failure.details ?? [])];
  const named = (field: string) => details.map((d) => (d as Record<string, unknown> | null)?.[field]).find((v) => v !== undefined);
  const key = context.idempotencyKey ?? (typeof named('idempotencyKey') === 'string' ? (named('idempotencyKey') as string) : undefined);
  const type = failure.type ?? 'ApplicationFailure';
  return new CardIssuingError({
    type,
    message: failure.message,
    ...context,
    ...(key === undefined ? {} : { idempotencyKey: key }),
    mayHaveTakenEffect: mayHaveTakenEffectOf(type, named('mayHaveTakenEffect')),
    details,
    cause: original,
  });
}

/** A failure of `p` as a CardIssuingError naming where it happened. */
export async function asCardIssuingError<T>(p: Promise<T>, context: FailureContext): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw toCardIssuingError(err, context);
  }
}
