/**
 * The activities of the Nexus onboarding relay (workflows/onboarding-relay.ts), on the Nexus
 * service's queue, whose worker writes plain JSON into our namespace. Anyone who may start a
 * workflow there may start a relay with any input, so they read only the onboarding flow under the
 * key they are given (the client's ID rule: no other flow), and answer only what may cross to the
 * caller in clear: the outcome's fields, or a failure's type and ids, never a message or detail of
 * our flow's (which our codec keeps encrypted in its history).
 */
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { CardIssuingError, type CardIssuingClient } from '../client';
import { onboardingWorkflowId } from '../client/requests';
import { hasErrors, keyErrors } from '../shared/card-rules';
import type { OnboardCardholderResult } from '../shared/types';
import type { OnboardingRelayInput } from '../workflows/onboarding-relay';

export type OnboardingSeen = { state: 'running' } | { state: 'cancelled' } | { state: 'completed'; result: OnboardCardholderResult };

export function createRelayActivities(client: CardIssuingClient) {
  return {
    /** Where the onboarding run stands: running, cancelled, or its outcome; any other ending is its failure, typed. */
    async lookAtOnboarding(input: OnboardingRelayInput): Promise<OnboardingSeen> {
      const flow = onboarding(client, input);
      const { status } = await flow.describe().catch((err: unknown) => Promise.reject(relayFailure(err, input)));
      if (status === 'RUNNING') return { state: 'running' };
      if (status === 'CANCELED' || status === 'CANCELLED') return { state: 'cancelled' };
      try {
        return { state: 'completed', result: outcomeOnly(await flow.result()) };
      } catch (err) {
        throw relayFailure(err, input);
      }
    },

    /** Asks for the onboarding run's cancellation (the relay then looks until it ended). */
    async cancelOnboarding(input: OnboardingRelayInput): Promise<void> {
      await onboarding(client, input).cancel().catch((err: unknown) => Promise.reject(relayFailure(err, input)));
    },
  };
}

export type RelayActivities = ReturnType<typeof createRelayActivities>;

function onboarding(client: CardIssuingClient, { idempotencyKey, runId }: OnboardingRelayInput) {
  // A key by the client's rule (so the ID is an onboarding's and nothing else), and a run.
  if (hasErrors(keyErrors(idempotencyKey)) || typeof runId !== 'string') {
    throw ApplicationFailure.create({ type: 'ValidationFailed', message: 'a relay names the key (1-64 of [a-zA-Z0-9_-]) and the run of the onboarding it follows', nonRetryable: true });
  }
  return client.flow<OnboardCardholderResult, 'onboardCardholder'>(onboardingWorkflowId(idempotencyKey), runId);
}

/** The outcome's own fields, and nothing else a result might carry. */
function outcomeOnly(result: OnboardCardholderResult): OnboardCardholderResult {
  const { id, kycStatus, reason, verificationUrl, warnings } = result;
  return { id, kycStatus, ...(reason === undefined ? {} : { reason }), ...(verificationUrl === undefined ? {} : { verificationUrl }), ...(warnings === undefined ? {} : { warnings }) };
}

/**
 * How the onboarding ended, as the caller may read it in clear: its type (the client's, or the
 * innermost typed failure of a flow that failed otherwise), `mayHaveTakenEffect` and the ids; our
 * flow's message and details stay in its encrypted history (`npm run starter -- status`). A failure
 * that says nothing of the flow (Temporal unreachable) is left to the activity's retries.
 */
function relayFailure(err: unknown, { idempotencyKey, runId }: OnboardingRelayInput): unknown {
  const type = err instanceof CardIssuingError ? err.type : err instanceof WorkflowNotFoundError ? 'FlowNotFound' : err instanceof WorkflowFailedError ? innermostType(err) : undefined;
  if (type === undefined || type === 'ClientTimeout' || type === 'Aborted') return err;
  const workflowId = onboardingWorkflowId(idempotencyKey);
  const mayHaveTakenEffect = err instanceof CardIssuingError ? err.mayHaveTakenEffect : type !== 'FlowNotFound';
  return ApplicationFailure.create({
    type,
    message: `the onboarding under key ${idempotencyKey} ended ${type} (its details: npm run starter -- status ${workflowId})`,
    nonRetryable: true,
    details: [{ mayHaveTakenEffect, workflowId, runId, idempotencyKey }],
  });
}

function innermostType(err: Error): string {
  let type = 'FlowFailed';
  for (let cause: unknown = err.cause; cause instanceof Error; cause = cause.cause) if (cause instanceof ApplicationFailure && cause.type) type = cause.type;
  return type;
}
