/**
 * How the Nexus handler says no (handler.ts, ownership.ts): an operation failure whose innermost
 * cause is an ApplicationFailure of the client's type, never retried by the caller's server.
 */
import * as nexus from 'nexus-rpc';
import { ApplicationFailure } from '@temporalio/common';
import { CardIssuingError } from '../client';

/**
 * The operation failed (never retried by the caller's server: a new call under the key asks again).
 * The SDK sends an OperationError as an ApplicationFailure of type `OperationError` whose cause is
 * ours: an ApplicationFailure of the client's type, the innermost of the caller's failure chain.
 * (A non-retryable ApplicationFailure thrown as it is would arrive as a handler error instead.)
 */
export function failed(err: CardIssuingError): nexus.OperationError {
  return new nexus.OperationError('failed', err.message, { cause: typedFailure(err) });
}

/**
 * The cause: an ApplicationFailure of the client's type, whose first detail holds `mayHaveTakenEffect`
 * (the client's answer, false only where nothing moved: client/errors.ts) and the ids to ask again under.
 */
function typedFailure(err: CardIssuingError): ApplicationFailure {
  const detail = {
    mayHaveTakenEffect: err.mayHaveTakenEffect,
    ...(err.workflowId === undefined ? {} : { workflowId: err.workflowId }),
    ...(err.updateId === undefined ? {} : { updateId: err.updateId }),
    ...(err.idempotencyKey === undefined ? {} : { idempotencyKey: err.idempotencyKey }),
    details: [...err.details],
  };
  return ApplicationFailure.create({ type: err.type, message: err.message, nonRetryable: true, details: [detail] });
}

/**
 * A refusal before any call, as the client's own: ValidationFailed naming the field and the rule.
 * `mayHaveTakenEffect: false` is safe here (issue 51): the handler refuses before it starts or
 * updates anything, so no request reached the provider and nothing can have moved.
 */
export function invalid(operation: string, field: string, rule: string): nexus.OperationError {
  return failed(new CardIssuingError({ type: 'ValidationFailed', message: `invalid ${operation}: ${field} ${rule}`, details: [{ errors: { [field]: rule } }] }));
}

/**
 * What the caller's configuration or ownership does not allow: NotAllowed, never retried, nothing
 * started. `mayHaveTakenEffect: false` is safe for the same reason: refused before anything was sent.
 */
export function notAllowed(operation: string, message: string, detail: Record<string, unknown>): nexus.OperationError {
  return failed(new CardIssuingError({ type: 'NotAllowed', message: `${operation} not allowed: ${message}`, details: [detail] }));
}
