/**
 * Legacy (docs/versioning.md, one-way waiting): how a flow started before its entity workflow
 * polled by itself waits, kept so that such flows replay and finish. It polls the provider
 * itself and tells the entity what it saw (entityObserved). Remove once no flow without the
 * `one-way-waiting` marker is open.
 */
import { condition, getExternalWorkflowHandle, log } from '@temporalio/workflow';
import { entityObservedSignal } from '../../shared/messages';
import { entityWorkflowId } from '../../shared/ids';
import { addressed } from '../../shared/signal-origin';
import { isFinal, isUnknownStatus } from '../../shared/statuses';
import type { EntityState, WaitTimings } from '../../shared/types';
import { readEntity, type AwaitedKind, type Observation, type Outcome } from './entity-reads';

export interface LegacyWait {
  kind: AwaitedKind;
  entityId: string;
  timings: Required<WaitTimings>;
  latest: () => EntityState | undefined;
  onUnknown: (status: string) => void;
}

/** Waits for the webhook, then polls by itself; the subscription was already made. */
export async function pollByTheFlow({ kind, entityId, timings: t, latest, onUnknown }: LegacyWait): Promise<Outcome | undefined> {
  const conclusive = () => isFinal(kind, latest()?.status);
  const fromWebhook = (): Outcome => ({ status: latest()!.status!, data: latest()!.data ?? {}, source: 'webhook' });
  if (await condition(conclusive, Math.min(t.webhookWaitMs, t.deadlineMs))) return fromWebhook();
  log.info('no conclusive webhook in time: polling the provider', { kind, entityId, webhookWaitMs: t.webhookWaitMs });

  const deadline = Date.now() + t.deadlineMs - t.webhookWaitMs;
  let interval = t.pollInitialIntervalMs;
  for (;;) {
    const seen = await readEntity(kind, entityId);
    if (conclusive()) return fromWebhook();
    if (isUnknownStatus(kind, seen.status)) onUnknown(seen.status);
    if (isFinal(kind, seen.status)) {
      await tellEntity(kind, entityId, seen);
      return { ...seen, source: 'poll' };
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) return undefined;
    if (await condition(conclusive, Math.min(interval, remaining))) return fromWebhook();
    interval = Math.min(interval * 2, t.pollMaxIntervalMs);
  }
}

async function tellEntity(kind: AwaitedKind, entityId: string, seen: Observation): Promise<void> {
  try {
    await getExternalWorkflowHandle(entityWorkflowId(kind, entityId)).signal(entityObservedSignal, addressed(entityWorkflowId(kind, entityId), seen));
  } catch {
    // The entity workflow closed in between; nothing waits on it.
  }
}
