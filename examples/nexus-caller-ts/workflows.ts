/**
 * A caller in another namespace (docs/nexus.md): workflows of another team that fund a card and
 * issue one through our Nexus service `cardIssuing`, with no access to our namespace and no
 * payload key of ours. Each calling team has an endpoint of its own (`card-issuing-<team>`): it is
 * the team's identity to our service, so the workflows take it as an argument. A caller's own code would import the contract from
 * `@card-issuing/client/nexus`; in this repository it is `src/client/nexus-contract`.
 * test/nexus/callers.test.ts runs these on the dev server; README "Calling from another namespace"
 * shows them.
 */
import { ApplicationFailure, NexusOperationFailure } from '@temporalio/common';
import { CancellationScope, createNexusServiceClient, isCancellation, sleep, type NexusOperationCancellationType } from '@temporalio/workflow';
import { cardIssuingService, type MoneyMovementRequest, type NexusIssueCardRequest, type NexusOnboardRequest, type NexusOperationName } from '../../src/client/nexus-contract';

/** What the caller's workflow makes of the operation: its result, or the failure's type as our service gave it. */
export type CallerOutcome<T> = { ok: true; result: T } | { ok: false; type: string; message: string; mayHaveTakenEffect: boolean; cancelled?: boolean };

// --- the README's snippet: begin
export async function fundCardThroughNexus(endpoint: string, request: MoneyMovementRequest): Promise<CallerOutcome<unknown>> {
  const cardIssuing = createNexusServiceClient({ endpoint, service: cardIssuingService });
  try {
    const result = await cardIssuing.executeOperation('fundCard', request, { scheduleToCloseTimeout: '10 minutes' });
    return { ok: true, result };
  } catch (err) {
    const failure = cardIssuingFailure(err);
    if (failure) return { ok: false, ...failure };
    throw err;
  }
}

/** Our failure types cross typed: the innermost ApplicationFailure of the chain has the client package's `type`, and `mayHaveTakenEffect` in its first detail. */
function cardIssuingFailure(err: unknown): { type: string; message: string; mayHaveTakenEffect: boolean } | undefined {
  if (!(err instanceof NexusOperationFailure)) return undefined;
  let ours: ApplicationFailure | undefined;
  for (let cause: unknown = err.cause; cause instanceof Error; cause = cause.cause) if (cause instanceof ApplicationFailure) ours = cause;
  if (!ours) return undefined;
  const [detail] = (ours.details ?? []) as Array<{ mayHaveTakenEffect?: boolean }>;
  return { type: ours.type ?? 'ApplicationFailure', message: ours.message, mayHaveTakenEffect: detail?.mayHaveTakenEffect === true };
}
// --- the README's snippet: end

/** Any operation of the service with its input: its result, or its failure as our service typed it (NotAllowed, ValidationFailed, …). */
export async function operationThroughNexus(endpoint: string, operation: NexusOperationName, input: unknown): Promise<CallerOutcome<unknown>> {
  const cardIssuing = createNexusServiceClient({ endpoint, service: cardIssuingService });
  const execute = cardIssuing.executeOperation.bind(cardIssuing) as unknown as (op: string, input: unknown, options: { scheduleToCloseTimeout: string }) => Promise<unknown>;
  try {
    return { ok: true, result: await execute(operation, input, { scheduleToCloseTimeout: '10 minutes' }) };
  } catch (err) {
    const failure = cardIssuingFailure(err);
    if (failure) return { ok: false, ...failure };
    throw err;
  }
}

export async function issueCardThroughNexus(endpoint: string, request: NexusIssueCardRequest): Promise<CallerOutcome<unknown>> {
  const cardIssuing = createNexusServiceClient({ endpoint, service: cardIssuingService });
  const result = await cardIssuing.executeOperation('issueCard', request, { scheduleToCloseTimeout: '10 minutes' });
  return { ok: true, result };
}

/**
 * Starts issueCard and cancels it after `cancelAfterMs`: what the caller sees. Our operations are
 * synchronous, so nothing of ours is cancelled (docs/nexus.md, "Cancellation"): under TRY_CANCEL or
 * ABANDON the caller stops waiting at once; under the SDK's default it waits for our outcome.
 */
export async function issueCardThenCancel(endpoint: string, request: NexusIssueCardRequest, cancelAfterMs: number, cancellationType: NexusOperationCancellationType): Promise<CallerOutcome<unknown>> {
  const cardIssuing = createNexusServiceClient({ endpoint, service: cardIssuingService });
  try {
    const result = await CancellationScope.cancellable(async () => {
      const operation = cardIssuing.executeOperation('issueCard', request, { scheduleToCloseTimeout: '10 minutes', cancellationType });
      await sleep(cancelAfterMs);
      CancellationScope.current().cancel();
      return await operation;
    });
    return { ok: true, result };
  } catch (err) {
    if (isCancellation(err)) return { ok: false, type: 'Cancelled', message: (err as Error).message, mayHaveTakenEffect: true, cancelled: true };
    throw err;
  }
}

/**
 * A hosted onboarding: the operation runs until the review ends, and the person needs the provider's
 * page before that, so the caller reads it meanwhile through `onboarding` (by the same key).
 * `cancelOncePaged`: the caller cancels once it has the page (the person gave up, say), waiting until
 * ours is cancelled too (the SDK's default cancellation type).
 */
export async function onboardHostedThroughNexus(endpoint: string, request: NexusOnboardRequest, cancelOncePaged = false): Promise<{ verificationUrl?: string; outcome: CallerOutcome<unknown> }> {
  const cardIssuing = createNexusServiceClient({ endpoint, service: cardIssuingService });
  const scope = new CancellationScope();
  const running = scope.run(() => cardIssuing.executeOperation('onboardCardholder', request, { scheduleToCloseTimeout: '1 day' })).then(
    (result): CallerOutcome<unknown> => ({ ok: true, result }),
    (err: unknown): CallerOutcome<unknown> => {
      if (isCancellation(err)) return { ok: false, type: 'Cancelled', message: (err as Error).message, mayHaveTakenEffect: false, cancelled: true };
      const failure = cardIssuingFailure(err);
      if (failure) return { ok: false, ...failure };
      throw err;
    },
  );
  let ended = false;
  void running.then(
    () => (ended = true),
    () => (ended = true),
  );
  let verificationUrl: string | undefined;
  for (let attempt = 0; attempt < 60 && !verificationUrl && !ended; attempt++) {
    // Not found until the flow exists: asked again a second later.
    const progress = await cardIssuing.executeOperation('onboarding', { idempotencyKey: request.idempotencyKey }, { scheduleToCloseTimeout: '30 seconds' }).catch(() => undefined);
    verificationUrl = progress?.verificationUrl;
    if (!verificationUrl) await sleep(1000);
  }
  // Here a real caller sends the person to verificationUrl.
  if (cancelOncePaged && verificationUrl) scope.cancel();
  return { verificationUrl, outcome: await running };
}
