/**
 * The handler of the Nexus service `cardIssuing` (client/nexus-contract.ts; docs/nexus.md). Each operation is
 * the client package's call of the same name, made by our worker with our payload codec: the key
 * rule (workflow or update ID from the caller's key), the request digest that refuses another
 * request under a key, and the restart after a failed run are the client's, in one place. So is the
 * answer to a repeat after an unsure end (issue 51, item 5): the server's retry of a request whose
 * run ended OutcomeUnknown follows that run and is answered from its open item (still open: the same
 * OutcomeUnknown, `mayHaveTakenEffect: true`; closed: its record), never by a second run.
 *
 * One handler per caller (NEXUS_CALLERS; nexus/callers.ts), on that caller's own queue behind its own
 * endpoint, so it knows whom it serves. Before anything starts it refuses NotAllowed what the caller's
 * configuration does not allow (an operation outside its list, an amount above its limit; a payout above
 * its payoutApprovalAbove starts held for an operator's approval instead) and what the
 * caller does not own (a card it did not issue here, a cardholder it did not onboard here:
 * ownership.ts); it scopes every key the caller sends to the caller (`<name>_<key>`), so two callers'
 * keys never reach the same flow; and an eSIM order's QR code stays here (a reference crosses instead).
 *
 * Every operation but onboardCardholder (a relay workflow: onboardingOperation) is synchronous. A
 * call still running when the Nexus request must be answered is a retryable UPSTREAM_TIMEOUT: the caller's server asks again, with the same input and so the same
 * key, and the call joins the flow or update already there until it has an outcome. A failure is
 * an operation failure whose innermost cause is an ApplicationFailure of the client's `type`, with
 * `mayHaveTakenEffect` and the ids in its first detail: the caller catches the same types as the
 * client package's callers.
 */
import * as nexus from 'nexus-rpc';
import { WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowRunOperationHandler, startWorkflow } from '@temporalio/nexus';
import { CardIssuingError, type CallOptions, type CardIssuingClient } from '../client';
import { relayToken } from './relay-token';
import type { CodecKeys } from '../codec/payload-codec';
import {
  cardIssuingService,
  type CardRef,
  type EsimOrderResult,
  type MoneyMovementRequest,
  type NexusEsimOrderResult,
  type NexusIssueCardRequest,
  type NexusOnboardRequest,
  type NexusOperationName,
  type OnboardCardholderResult,
  type OnboardingRef,
  type PurchaseEsimRequest,
  type RechargeEsimRequest,
  type SendPayoutRequest,
} from '../client/nexus-contract';
import type { onboardingRelay } from '../workflows/onboarding-relay';
import { maxKeyLength, payoutApprovalGate, scopedKey, type NexusCaller } from './callers';
import { CallerOwnership } from './ownership';
import { failed, invalid, notAllowed } from './refusals';

/** The most a handler waits for an outcome before answering "still running": under the server's Nexus request timeout (10 s by default). */
export const NEXUS_WAIT_MS = 8000;
/** Room left before the request's own deadline for the answer to travel back. */
const ANSWER_MARGIN_MS = 1000;

type Call<I, O> = (input: I, opts: CallOptions) => Promise<O>;

/**
 * The service as `caller` may call it. `codec`: our payload keys, from which the onboarding relay's
 * signature is derived (relay-token.ts).
 */
export function cardIssuingHandler(client: CardIssuingClient, codec: CodecKeys, caller: NexusCaller) {
  const owns = new CallerOwnership(client, caller);
  const key = (operation: NexusOperationName, value: unknown, field = 'idempotencyKey') => scoped(caller, operation, value, field);
  return nexus.serviceHandler(cardIssuingService, {
    issueCard: operation(caller, 'issueCard', async (input: NexusIssueCardRequest, opts) => {
      const { onboardingKey, ...request } = withoutPin(input);
      const idempotencyKey = key('issueCard', request.idempotencyKey);
      withinLimit(caller, 'issueCard', 'initialAmount', request.initialAmount, caller.issueLimit, 'issueLimit');
      if (request.cardholderId !== undefined) await owns.cardholder(request.cardholderId, onboardingKey === undefined ? undefined : key('issueCard', onboardingKey, 'onboardingKey'), onboardingKey, opts);
      return client.issueCard({ ...request, idempotencyKey }, opts);
    }),
    fundCard: operation(caller, 'fundCard', async (input: MoneyMovementRequest, opts) => {
      const idempotencyKey = key('fundCard', input.idempotencyKey);
      withinLimit(caller, 'fundCard', 'amount', input.amount, caller.fundLimit, 'fundLimit');
      await owns.card('fundCard', cardIdOf('fundCard', input), opts);
      return client.fundCard({ ...input, idempotencyKey }, opts);
    }),
    withdrawFromCard: operation(caller, 'withdrawFromCard', async (input: MoneyMovementRequest, opts) => {
      const idempotencyKey = key('withdrawFromCard', input.idempotencyKey);
      await owns.card('withdrawFromCard', cardIdOf('withdrawFromCard', input), opts);
      return client.withdrawFromCard({ ...input, idempotencyKey }, opts);
    }),
    purchaseEsim: operation(caller, 'purchaseEsim', async (input: PurchaseEsimRequest, opts) => {
      const flow = await client.startPurchaseEsim({ ...input, idempotencyKey: key('purchaseEsim', input.idempotencyKey) }, opts);
      return withoutQrCode(await flow.result(opts), flow.workflowId);
    }),
    rechargeEsim: operation(caller, 'rechargeEsim', async (input: RechargeEsimRequest, opts) => {
      const flow = await client.startRechargeEsim({ ...input, idempotencyKey: key('rechargeEsim', input.idempotencyKey) }, opts);
      return withoutQrCode(await flow.result(opts), flow.workflowId);
    }),
    sendPayout: operation(caller, 'sendPayout', async (input: SendPayoutRequest, opts) => {
      const idempotencyKey = key('sendPayout', input.idempotencyKey);
      withinLimit(caller, 'sendPayout', 'arriveAmount', input.arriveAmount, caller.payoutLimit, 'payoutLimit');
      // The gate is ours to set, from the caller's configuration: a caller that names one is refused, never believed.
      if ('approval' in input) throw invalid('sendPayout', 'approval', 'is not taken over Nexus: whether a payout waits for an approval is set by the caller\'s configuration (payoutApprovalAbove)');
      // The provider finds a payout by merOrderNo whatever key made it: scoped too, so no caller meets another's payout.
      const merOrderNo = typeof input.merOrderNo === 'string' && input.merOrderNo.length > 0 ? scopedKey(caller, input.merOrderNo) : input.merOrderNo;
      // Above payoutApprovalAbove the flow starts and waits, sending nothing, for an operator's signed approval (workflows/lib/payout.ts).
      const approval = payoutApprovalGate(caller, input.arriveAmount);
      return client.sendPayout({ ...input, idempotencyKey, merOrderNo, ...(approval ? { approval } : {}) } as SendPayoutRequest, opts);
    }),
    onboardCardholder: onboardingOperation(client, codec, caller),
    onboarding: operation(caller, 'onboarding', (input: OnboardingRef, opts) => client.onboardingByKey(key('onboarding', input.idempotencyKey), opts), READ),
    cardState: operation(
      caller,
      'cardState',
      async (input: CardRef, opts) => {
        const cardId = cardIdOf('cardState', input);
        await owns.card('cardState', cardId, opts);
        return client.cardState(cardId, opts);
      },
      READ,
    ),
    walletBalance: async (ctx) => {
      allowed(caller, 'walletBalance');
      return answer(ctx, (opts) => client.walletBalance(opts), READ);
    },
  });
}

/**
 * onboardCardholder is asynchronous (it waits days for a person and a review): our onboarding flow
 * is started (or joined) by the client under the caller's scoped key, as over every operation, then a
 * relay on this caller's queue (workflows/onboarding-relay.ts) is the operation: it delivers the
 * outcome, and its cancellation cancels our onboarding. One relay per run of the onboarding (its ID
 * holds the scoped key, so it is the caller's own): a repeated call under the key attaches to it; a
 * call after that run ended without a result follows the run the client starts.
 */
function onboardingOperation(client: CardIssuingClient, codec: CodecKeys, caller: NexusCaller) {
  return new WorkflowRunOperationHandler<NexusOnboardRequest, OnboardCardholderResult>(async (ctx, input) => {
    allowed(caller, 'onboardCardholder');
    const given = hostedOnly(objectInput('onboardCardholder', input));
    const request = { ...given, idempotencyKey: scoped(caller, 'onboardCardholder', given.idempotencyKey) };
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

/** An operation the caller must be allowed, whose input must be a JSON object: anything else is refused before any call. */
function operation<I, O>(caller: NexusCaller, name: NexusOperationName, call: Call<I, O>, kind: Kind = {}) {
  return async (ctx: nexus.OperationContext, input: I): Promise<O> => {
    allowed(caller, name);
    return answer(ctx, (opts) => call(objectInput(name, input), opts), kind);
  };
}

/** The caller's list names the operation, or NotAllowed before anything else (its input is not even looked at). */
function allowed(caller: NexusCaller, operation: NexusOperationName): void {
  if (caller.operations.includes(operation)) return;
  throw notAllowed(operation, `caller ${caller.name} is not allowed ${operation}: its operations are ${caller.operations.join(', ')} (NEXUS_CALLERS)`, { caller: caller.name, operation });
}

/** An amount above the caller's limit is NotAllowed, naming the limit; one that is no number is left to the client's validation. */
function withinLimit(caller: NexusCaller, operation: NexusOperationName, field: string, amount: unknown, limit: number | undefined, limitName: string): void {
  if (limit === undefined || typeof amount !== 'number' || amount <= limit) return;
  throw notAllowed(operation, `${operation} ${field} ${amount} is above caller ${caller.name}'s ${limitName} ${limit}: refused, nothing started (a larger amount goes through a service in our namespace, not over Nexus)`, {
    caller: caller.name,
    operation,
    field,
    [limitName]: limit,
  });
}

/**
 * The caller's key as our client uses it: `<name>_<key>`, so the same key from two callers is two
 * requests. The key must leave room for the prefix within the provider's 64 characters.
 */
function scoped(caller: NexusCaller, operation: NexusOperationName, key: unknown, field = 'idempotencyKey'): string {
  const most = maxKeyLength(caller);
  if (typeof key === 'string' && key.length >= 1 && key.length <= most && /^[a-zA-Z0-9_-]+$/.test(key)) return scopedKey(caller, key);
  throw invalid(operation, field, `must be 1-${most} of [a-zA-Z0-9_-] over this endpoint: it is scoped to the caller as "${caller.name}_<key>", within the provider's 64 characters`);
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

function cardIdOf(operation: NexusOperationName, input: { cardId?: unknown }): string {
  if (typeof input.cardId === 'string' && /^[A-Za-z0-9_.:-]{1,128}$/.test(input.cardId)) return input.cardId;
  throw invalid(operation, 'cardId', 'is required: a card ID, 1-128 of [A-Za-z0-9_.:-]');
}

/**
 * An eSIM order as it may cross: its QR code (the eSIM's activation secret) and any field the
 * provider adds beyond the ones we know stay here; `qrCodeRef` is what a service in our namespace
 * redeems for the code (the client's `esimQrCode`).
 */
function withoutQrCode(order: EsimOrderResult, workflowId: string): NexusEsimOrderResult {
  const { orderNo, status, iccid, esimNo, operationId, type, planNo, amount, failureReason } = order;
  const known = { orderNo, status, iccid, esimNo, operationId, type, planNo, amount, failureReason };
  const defined = Object.fromEntries(Object.entries(known).filter(([, v]) => v !== undefined)) as Omit<NexusEsimOrderResult, 'qrCodeRef'>;
  return { ...defined, qrCodeRef: { orderNo, workflowId } };
}
