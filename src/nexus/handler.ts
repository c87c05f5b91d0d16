/**
 * The handler of the Nexus service `cardIssuing` (client/nexus-contract.ts; docs/nexus.md). Each operation is
 * the client package's call of the same name, made by our worker with our payload codec: the key
 * rule (workflow or update ID from the caller's key), the request digest that refuses another
 * request under a key, and the restart after a failed run are the client's, in one place.
 *
 * Every operation but onboardCardholder (a relay workflow: onboardingOperation) is synchronous. A
 * call still running when the Nexus request must be answered is a retryable UPSTREAM_TIMEOUT: the caller's server asks again, with the same input and so the same
 * key, and the call joins the flow or update already there until it has an outcome. A failure is
 * an operation failure whose innermost cause is an ApplicationFailure of the client's `type`, with
 * `mayHaveTakenEffect` and the ids in its first detail: the caller catches the same types as the
 * client package's callers.
 */
import * as nexus from 'nexus-rpc';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowRunOperationHandler, startWorkflow } from '@temporalio/nexus';
import { CardIssuingError, type CallOptions, type CardIssuingClient } from '../client';
import { relayToken } from './relay-token';
import type { CodecKeys } from '../codec/payload-codec';
import { cardIssuingService, type NexusIssueCardRequest, type NexusOnboardRequest, type OnboardCardholderResult, type OnboardingRef } from '../client/nexus-contract';
import type { onboardingRelay } from '../workflows/onboarding-relay';

/** The most a handler waits for an outcome before answering "still running": under the server's Nexus request timeout (10 s by default). */
export const NEXUS_WAIT_MS = 8000;
/** Room left before the request's own deadline for the answer to travel back. */
const ANSWER_MARGIN_MS = 1000;

type Call<I, O> = (input: I, opts: CallOptions) => Promise<O>;

/** `codec`: our payload keys, from which the onboarding relay's signature is derived (relay-token.ts). */
export function cardIssuingHandler(client: CardIssuingClient, codec: CodecKeys) {
  return nexus.serviceHandler(cardIssuingService, {
    issueCard: operation('issueCard', (input: NexusIssueCardRequest, opts) => client.issueCard(withoutPin(input), opts)),
    fundCard: operation('fundCard', (input, opts) => client.fundCard(input, opts)),
    withdrawFromCard: operation('withdrawFromCard', (input, opts) => client.withdrawFromCard(input, opts)),
    purchaseEsim: operation('purchaseEsim', (input, opts) => client.purchaseEsim(input, opts)),
    rechargeEsim: operation('rechargeEsim', (input, opts) => client.rechargeEsim(input, opts)),
    sendPayout: operation('sendPayout', (input, opts) => client.sendPayout(input, opts)),
    onboardCardholder: onboardingOperation(client, codec),
    onboarding: operation('onboarding', (input: OnboardingRef, opts) => client.onboardingByKey(input.idempotencyKey, opts), READ),
    cardState: operation('cardState', (input, opts) => client.cardState(cardIdOf(input), opts), READ),
    walletBalance: async (ctx) => answer(ctx, (opts) => client.walletBalance(opts), READ),
  });
}

/**
 * onboardCardholder is asynchronous (it waits days for a person and a review): our onboarding flow
 * is started (or joined) by the client under the caller's key, as over every operation, then a relay
 * on this queue (workflows/onboarding-relay.ts) is the operation: it delivers the outcome, and its
 * cancellation cancels our onboarding. One relay per run of the onboarding: a repeated call under the
 * key attaches to it; a call after that run ended without a result follows the run the client starts.
 */
function onboardingOperation(client: CardIssuingClient, codec: CodecKeys) {
  return new WorkflowRunOperationHandler<NexusOnboardRequest, OnboardCardholderResult>(async (ctx, input) => {
    const request = hostedOnly(objectInput('onboardCardholder', input));
    const flow = await answer(ctx, (opts) => client.startOnboardCardholder(request, opts));
    try {
      return await startWorkflow<typeof onboardingRelay>(ctx, 'onboardingRelay', {
        workflowId: relayWorkflowId(flow.workflowId, flow.runId),
        args: [{ idempotencyKey: request.idempotencyKey, runId: flow.runId, token: relayToken(codec, request.idempotencyKey, flow.runId) }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
    } catch (err) {
      throw acrossTheBoundary(err);
    }
  });
}

export function relayWorkflowId(onboardingWorkflowId: string, runId: string): string {
  return `nexus-relay/${onboardingWorkflowId}/${runId}`;
}

/** A read moves nothing: a flow it finds none of is FlowNotFound, not a call to ask again. */
const READ = { read: true } as const;
type Kind = { read?: boolean };

/** An operation whose input must be a JSON object: anything else is refused ValidationFailed before any call. */
function operation<I, O>(name: string, call: Call<I, O>, kind: Kind = {}) {
  return async (ctx: nexus.OperationContext, input: I): Promise<O> => answer(ctx, (opts) => call(objectInput(name, input), opts), kind);
}

function objectInput<I>(operation: string, input: I): I {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return input;
  throw invalid(operation, 'input', `must be a JSON object (got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input})`);
}

/** Runs the call within what is left of the request, and turns its failure into one the caller's SDK reads. */
async function answer<O>(ctx: nexus.OperationContext, call: (opts: CallOptions) => Promise<O>, kind: Kind = {}): Promise<O> {
  try {
    // One deadline for the whole call: a relative timeout would count again from the start for the result.
    return await call({ signal: AbortSignal.any([ctx.abortSignal, AbortSignal.timeout(waitFor(ctx.requestDeadline))]) });
  } catch (err) {
    throw acrossTheBoundary(err, kind);
  }
}

export function waitFor(deadline: Date | undefined, now = Date.now()): number {
  const left = deadline ? deadline.getTime() - now - ANSWER_MARGIN_MS : NEXUS_WAIT_MS;
  return Math.max(1, Math.min(NEXUS_WAIT_MS, left));
}

/**
 * Still running (our wait ended first, or the server gave up on the request): retryable, and the
 * retry joins the same flow by its key. A failure of the call: the operation failed, typed. Anything
 * else (Temporal unreachable from the handler, a bug): retryable, said as it is.
 */
export function acrossTheBoundary(err: unknown, kind: Kind = {}): Error {
  if (err instanceof nexus.OperationError || err instanceof nexus.HandlerError) return err;
  if (err instanceof CardIssuingError && (err.type === 'ClientTimeout' || err.type === 'Aborted')) {
    return new nexus.HandlerError('UPSTREAM_TIMEOUT', `still running: ${err.message}; the retry of this request joins it by its key`, { retryableOverride: true });
  }
  if (err instanceof CardIssuingError) return failed(err);
  // A read of a flow or card there is none of (yet): typed. A money call's lost run is asked again (it may have moved money).
  if (err instanceof WorkflowNotFoundError && kind.read) return failed(new CardIssuingError({ type: 'FlowNotFound', message: `no flow ${err.workflowId}`, workflowId: err.workflowId }));
  return new nexus.HandlerError('INTERNAL', `could not complete: ${(err as Error)?.message ?? String(err)}`, { retryableOverride: true });
}

/**
 * The operation failed (never retried by the caller's server: a new call under the key asks again).
 * The SDK sends an OperationError as an ApplicationFailure of type `OperationError` whose cause is
 * ours: an ApplicationFailure of the client's type, the innermost of the caller's failure chain.
 * (A non-retryable ApplicationFailure thrown as it is would arrive as a handler error instead.)
 */
function failed(err: CardIssuingError): nexus.OperationError {
  return new nexus.OperationError('failed', err.message, { cause: typedFailure(err) });
}

/** The cause: an ApplicationFailure of the client's type, whose first detail holds `mayHaveTakenEffect` and the ids to ask again under. */
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


function withoutPin(input: NexusIssueCardRequest): NexusIssueCardRequest {
  if ('pin' in input && (input as { pin?: unknown }).pin !== undefined) {
    throw invalid('issueCard', 'pin', "is not taken over Nexus (a Nexus payload is the caller's, in clear): set it with the client package, which seals it to the workers' key, or the CLI's `pin`");
  }
  return input;
}

/** Documents are files in our workers' store: a caller in another namespace names none (the hosted flow needs none). */
function hostedOnly(input: NexusOnboardRequest): NexusOnboardRequest {
  const mode = (input as { mode?: unknown }).mode;
  if (mode === 'hosted') return input;
  throw invalid('onboardCardholder', 'mode', `must be "hosted" over Nexus (got ${JSON.stringify(mode ?? 'form')}): the form and the manual submission name documents in our workers' store, which a caller in another namespace cannot fill; use the client package or the CLI for them`);
}

function cardIdOf(input: { cardId?: unknown }): string {
  if (typeof input.cardId === 'string' && input.cardId.length > 0) return input.cardId;
  throw invalid('cardState', 'cardId', 'is required: a non-empty string');
}

/** A refusal before any call, as the client's own: ValidationFailed naming the field and the rule. */
function invalid(operation: string, field: string, rule: string): nexus.OperationError {
  return failed(new CardIssuingError({ type: 'ValidationFailed', message: `invalid ${operation}: ${field} ${rule}`, details: [{ errors: { [field]: rule } }] }));
}
