/**
 * Waiting for the outside world: subscribe to the entity workflow that receives the
 * provider's webhooks, wait for a final status (shared/statuses.ts says which are), and poll
 * the provider with growing intervals when no webhook comes in time. A webhook that arrives
 * while polling still wins. A status the table does not know is recorded (log and the
 * ProviderStatus search attribute) and waited past, until the deadline.
 */
import { condition, getExternalWorkflowHandle, log, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { PROVIDER_STATUS } from '../../shared/search-attributes';
import { isFinal, isUnknownStatus } from '../../shared/statuses';
import { entityObservedSignal, entityStateSignal } from '../../shared/messages';
import { entityWorkflowId, type EntityKind } from '../../shared/ids';
import type { EntityState, WaitTimings } from '../../shared/types';
import { unmeteredActivities } from './provider';

export const DEFAULT_TIMINGS: Required<WaitTimings> = {
  webhookWaitMs: 30_000,
  pollInitialIntervalMs: 2_000,
  pollMaxIntervalMs: 60_000,
  deadlineMs: 24 * 60 * 60 * 1000,
};

export interface Observation {
  status: string;
  data: Record<string, unknown>;
}

export interface AwaitOutcomeOptions {
  kind: EntityKind;
  entityId: string;
  poll: () => Promise<Observation>;
  timings?: WaitTimings;
}

export type Outcome = Observation & { source: 'webhook' | 'poll' };

/** Resolves with the first conclusive status, or undefined when the deadline passed. */
export async function awaitOutcome(opts: AwaitOutcomeOptions): Promise<Outcome | undefined> {
  const t = { ...DEFAULT_TIMINGS, ...opts.timings };
  let latest: EntityState | undefined;
  setHandler(entityStateSignal, (state) => {
    if (state.kind === opts.kind && state.entityId === opts.entityId) latest = state;
  });
  const isConclusive = (status: string | undefined) => isFinal(opts.kind, status);
  const conclusive = () => isConclusive(latest?.status);
  const fromWebhook = (): Outcome => ({ status: latest!.status!, data: latest!.data ?? {}, source: 'webhook' });

  await unmeteredActivities.subscribeToEntity({ kind: opts.kind, entityId: opts.entityId, subscriberWorkflowId: workflowInfo().workflowId });
  if (await condition(conclusive, Math.min(t.webhookWaitMs, t.deadlineMs))) return fromWebhook();
  log.info('no conclusive webhook in time: polling the provider', { kind: opts.kind, entityId: opts.entityId, webhookWaitMs: t.webhookWaitMs });

  const deadline = Date.now() + t.deadlineMs - t.webhookWaitMs;
  let interval = t.pollInitialIntervalMs;
  for (;;) {
    const seen = await opts.poll();
    if (conclusive()) return fromWebhook();
    if (isUnknownStatus(opts.kind, seen.status)) recordUnknown(opts, seen.status);
    if (isConclusive(seen.status)) {
      await tellEntity(opts.kind, opts.entityId, seen);
      return { ...seen, source: 'poll' };
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) return undefined;
    if (await condition(conclusive, Math.min(interval, remaining))) return fromWebhook();
    interval = Math.min(interval * 2, t.pollMaxIntervalMs);
  }
}

function recordUnknown(opts: AwaitOutcomeOptions, status: string): void {
  log.warn('provider status not in our vocabulary: treated as not final until the deadline', { kind: opts.kind, entityId: opts.entityId, status });
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: status }]);
}

/** The entity workflow exists (we subscribed through signal-with-start): tell it what polling found. */
async function tellEntity(kind: EntityKind, entityId: string, seen: Observation): Promise<void> {
  try {
    await getExternalWorkflowHandle(entityWorkflowId(kind, entityId)).signal(entityObservedSignal, seen);
  } catch {
    // The entity workflow closed in between; nothing waits on it.
  }
}
