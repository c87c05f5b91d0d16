/**
 * The activities of the Nexus onboarding relay (workflows/onboarding-relay.ts), on the Nexus
 * service's queue: they read and cancel our onboarding flow through the client package, with our
 * codec, and answer the relay only what may cross to the caller (the onboarding's outcome).
 */
import { Context } from '@temporalio/activity';
import { CardIssuingError, type CardIssuingClient } from '../client';
import type { OnboardCardholderResult } from '../shared/types';
import type { OnboardingRelayInput } from '../workflows/onboarding-relay';
import { typedFailure } from './typed-failure';

/** How often a waiting activity says it is alive (its heartbeat timeout is 30 s). */
const HEARTBEAT_MS = 10_000;

export type CancelledOrDone = { cancelled: true } | { cancelled: false; result: OnboardCardholderResult };

export function createRelayActivities(client: CardIssuingClient) {
  return {
    /** The onboarding's result, once it ends; its failure, typed. */
    async awaitOnboarding({ workflowId }: OnboardingRelayInput): Promise<OnboardCardholderResult> {
      return heartbeating(() => outcome(client, workflowId));
    },

    /** Cancels the onboarding and waits until it ends: cancelled, or completed if its review came first. */
    async cancelOnboarding({ workflowId }: OnboardingRelayInput): Promise<CancelledOrDone> {
      return heartbeating(async () => {
        await client.flow(workflowId).cancel().catch(ignoreEnded);
        try {
          return { cancelled: false, result: await outcome(client, workflowId) };
        } catch (err) {
          if ((err as { type?: string }).type === 'FlowCancelled') return { cancelled: true };
          throw err;
        }
      });
    },
  };
}

export type RelayActivities = ReturnType<typeof createRelayActivities>;

async function outcome(client: CardIssuingClient, workflowId: string): Promise<OnboardCardholderResult> {
  try {
    return await client.flow<OnboardCardholderResult, 'onboardCardholder'>(workflowId).result({ signal: Context.current().cancellationSignal });
  } catch (err) {
    throw err instanceof CardIssuingError && err.type !== 'Aborted' ? typedFailure(err) : err;
  }
}

/** A cancellation of a flow that already ended changes nothing: its result says how it ended. */
function ignoreEnded(err: unknown): void {
  if (!(err instanceof CardIssuingError) || err.type === 'ClientTimeout' || err.type === 'Aborted') throw err;
}

async function heartbeating<T>(wait: () => Promise<T>): Promise<T> {
  const context = Context.current();
  const beat = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
  try {
    return await wait();
  } finally {
    clearInterval(beat);
  }
}
