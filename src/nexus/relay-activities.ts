/**
 * The activities of the Nexus onboarding relay (workflows/onboarding-relay.ts), on the Nexus
 * service's queue, whose worker writes plain JSON into our namespace. Anyone who may start a
 * workflow there may start a relay with any input, so they read only a relay our handler signed
 * (relay-token.ts), only the onboarding flow under its key (the client's ID rule), on a caller's queue
 * only a key scoped to that caller (`<name>_…`, nexus/callers.ts), and answer only
 * what may cross to the caller in clear: the outcome's fields except its free-text reason, or a
 * failure's type and ids, never a message or detail of our flow's (our codec keeps those encrypted).
 */
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { CardIssuingError, type CardIssuingClient } from '../client';
import { onboardingWorkflowId } from '../client/requests';
import type { CodecKeys } from '../codec/payload-codec';
import { hasErrors, keyErrors } from '../shared/card-rules';
import type { OnboardCardholderResult } from '../shared/types';
import type { OnboardingRelayInput } from '../workflows/onboarding-relay';
import { relayTokenValid } from './relay-token';
import { scopedKey, type NexusCaller } from './callers';

export type OnboardingSeen = { state: 'running' } | { state: 'cancelled' } | { state: 'completed'; result: OnboardCardholderResult };

/** `caller`: the caller whose queue these run on (their relays follow only its onboardings); unset, any key (replays). */
export function createRelayActivities(client: CardIssuingClient, codec: CodecKeys, caller?: Pick<NexusCaller, 'name'>) {
  return {
    /** Where the onboarding run stands: running, cancelled, or its outcome; any other ending is its failure, typed. */
    async lookAtOnboarding(input: OnboardingRelayInput): Promise<OnboardingSeen> {
      const flow = onboarding(client, codec, input, caller);
      try {
        const { status, type } = await flow.describe();
        if (type !== 'onboardCardholder') throw new WorkflowNotFoundError('not an onboarding', flow.workflowId, flow.runId);
        if (status === 'RUNNING') return { state: 'running' };
        if (status === 'CANCELLED' || status === 'CANCELED') return { state: 'cancelled' };
        return { state: 'completed', result: outcomeOnly(await flow.result()) };
      } catch (err) {
        throw relayFailure(err, input);
      }
    },

    /** Asks for the onboarding run's cancellation (the relay then looks until it ended). A run already ended is left as it ended. */
    async cancelOnboarding(input: OnboardingRelayInput): Promise<void> {
      await onboarding(client, codec, input, caller)
        .cancel()
        .catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return;
          throw relayFailure(err, input);
        });
    },
  };
}

export type RelayActivities = ReturnType<typeof createRelayActivities>;

function onboarding(client: CardIssuingClient, codec: CodecKeys, { idempotencyKey, runId, token }: OnboardingRelayInput, caller?: Pick<NexusCaller, 'name'>) {
  // A key by the client's rule (so the ID is an onboarding's), the caller's own, a run, and our handler's signature over both.
  const callersOwn = caller === undefined || (typeof idempotencyKey === 'string' && idempotencyKey.startsWith(scopedKey(caller, '')));
  if (hasErrors(keyErrors(idempotencyKey)) || !callersOwn || typeof runId !== 'string' || runId.length === 0 || !relayTokenValid(codec, token, idempotencyKey, runId)) {
    throw ApplicationFailure.create({ type: 'ValidationFailed', message: 'a relay follows one onboarding run, named and signed by our Nexus handler', nonRetryable: true });
  }
  return client.flow<OnboardCardholderResult, 'onboardCardholder'>(onboardingWorkflowId(idempotencyKey), runId);
}

/** The outcome's own fields. Not the provider's free-text `reason`, which may repeat the applicant's identity: it stays in our flow. */
function outcomeOnly(result: OnboardCardholderResult): OnboardCardholderResult {
  const { id, kycStatus, verificationUrl, warnings } = result;
  return { id, kycStatus, ...(verificationUrl === undefined ? {} : { verificationUrl }), ...(warnings === undefined ? {} : { warnings }) };
}

/**
 * How the onboarding ended, as the caller may read it in clear: its type (the client's, or the
 * innermost typed failure of a flow that failed otherwise), `mayHaveTakenEffect` and the ids; our
 * flow's message and details stay in its encrypted history (`npm run starter -- status`). Temporal
 * unreachable or slow is retried (a fresh failure of its type only: its cause may hold what our codec
 * decoded); anything else that is not the flow's (a payload our keys cannot open) is final.
 */
function relayFailure(err: unknown, { idempotencyKey, runId }: OnboardingRelayInput): Error {
  if (err instanceof ApplicationFailure) return err;
  const transient = isServiceError(err) || (err instanceof CardIssuingError && (err.type === 'ClientTimeout' || err.type === 'Aborted'));
  const type = transient ? 'TemporalUnavailable' : err instanceof CardIssuingError ? err.type : err instanceof WorkflowNotFoundError ? 'FlowNotFound' : err instanceof WorkflowFailedError ? innermostType(err) : 'FlowUnreadable';
  const workflowId = onboardingWorkflowId(idempotencyKey);
  const mayHaveTakenEffect = err instanceof CardIssuingError ? err.mayHaveTakenEffect : type !== 'FlowNotFound';
  return ApplicationFailure.create({
    type,
    message: `the onboarding under key ${idempotencyKey} ${transient ? 'could not be read now' : `ended ${type}`} (its details: npm run starter -- status ${workflowId})`,
    nonRetryable: !transient,
    details: [{ mayHaveTakenEffect, workflowId, runId, idempotencyKey }],
  });
}

function isServiceError(err: unknown): boolean {
  return typeof (err as { code?: unknown } | null)?.code === 'number' || (err as Error | null)?.name === 'ServiceError';
}

function innermostType(err: Error): string {
  let type = 'FlowFailed';
  for (let cause: unknown = err.cause; cause instanceof Error; cause = cause.cause) if (cause instanceof ApplicationFailure && cause.type) type = cause.type;
  return type;
}
