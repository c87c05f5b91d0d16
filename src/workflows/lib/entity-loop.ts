/**
 * The life of an entity workflow: wire the inbox to its signals and query, poll the provider
 * for subscribers that ask for it (entity-watch.ts), notify subscribers after every change, continue-as-new before the history grows large (carrying the inbox, so
 * de-duplication survives) or onto its deployment's new build, and close after a quiet linger once the entity is final.
 *
 * Release 3 (docs/versioning.md): the entity workflows are pinned to the build that runs them and
 * move to a new one only at a continue-as-new, when the server says the run's target build changed
 * (`targetWorkerDeploymentVersionChanged`, set for pinned runs only). The new run's first task goes
 * to the new build (AUTO_UPGRADE for that task) and is pinned there. A run looks at every workflow
 * task: any event, or the rollOver signal a promotion sends (temporal/roll-over.ts), since the
 * server never wakes a run for it. A run that is not pinned never sees the flag, so the histories of
 * release 2 replay as they ran: no marker.
 */
import { allHandlersFinished, condition, setHandler, upsertSearchAttributes, workflowInfo, type ContinueAsNewOptions } from '@temporalio/workflow';
import { entityEventQuery, entityObservedSignal, entityStateQuery, providerEventSignal, rollOverSignal, subscribeSignal } from '../../shared/messages';
import { PROVIDER_STATUS } from '../../shared/search-attributes';
import type { ProviderEvent, WatchPlan } from '../../shared/types';
import { encryptedSignal, trustedSignal } from './trusted-signal';
import type { EntityInbox } from './entity-inbox';
import type { EntityWatch } from './entity-watch';

export const DEFAULT_LINGER_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_MAX_HISTORY_EVENTS = 10_000;

export interface EntityLoopOptions {
  /** When true the workflow may close after `lingerMs` without news. */
  isFinal: () => boolean;
  lingerMs?: number;
  maxHistoryEvents?: number;
  /** Extra handling of an event the inbox accepted (e.g. a card transaction). */
  onEvent?: (event: ProviderEvent) => void;
  /** Continues as new with `options` (the new build's first task when the target build changed), carrying the run's state. */
  continueAsNew: (options: ContinueAsNewOptions) => Promise<never>;
}

/** The server says this pinned run's deployment has another target build: the next run goes there. */
const targetBuildChanged = (): boolean => workflowInfo().targetWorkerDeploymentVersionChanged === true;

export function wireInbox(inbox: EntityInbox, watch: EntityWatch, onEvent?: (event: ProviderEvent) => void): void {
  setHandler(providerEventSignal, trustedSignal('providerEvent', (event: ProviderEvent) => {
    if (inbox.accept(event)) onEvent?.(event);
  }));
  setHandler(subscribeSignal, encryptedSignal('subscribe', ({ workflowId, watch: plan }: { workflowId: string; watch?: WatchPlan }) => {
    inbox.subscribe(workflowId);
    // Subscribers started before one-way waiting send no plan: they poll by themselves.
    if (plan) watch.request(plan);
  }));
  setHandler(entityObservedSignal, trustedSignal('entityObserved', ({ status, data }: { status: string; data: Record<string, unknown> }) => inbox.observe(status, data, Date.now())));
  // Only wakes the run: the loop's wait looks at the target build on every task.
  setHandler(rollOverSignal, () => undefined);
  setHandler(entityStateQuery, () => inbox.state);
  // A query leaves no trace in history: adding it changes no replay.
  setHandler(entityEventQuery, (eventId) => ({ applied: inbox.hasSeen(eventId), state: inbox.state }));
}

export async function runEntityLoop(inbox: EntityInbox, opts: EntityLoopOptions): Promise<void> {
  const lingerMs = opts.lingerMs ?? DEFAULT_LINGER_MS;
  const maxHistory = opts.maxHistoryEvents ?? DEFAULT_MAX_HISTORY_EVENTS;
  const shouldRoll = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > maxHistory || targetBuildChanged();
  let reportedStatus: string | undefined;
  for (;;) {
    const wake = () => inbox.notifyPending || shouldRoll();
    const woke = opts.isFinal() ? await condition(wake, lingerMs) : (await condition(wake), true);
    if (inbox.notifyPending) {
      if (inbox.state.status !== reportedStatus) {
        reportedStatus = inbox.state.status;
        upsertSearchAttributes([{ key: PROVIDER_STATUS, value: reportedStatus ?? 'UNKNOWN' }]);
      }
      await inbox.notifySubscribers();
      continue;
    }
    if (shouldRoll()) {
      // Updates in flight finish here; signals that arrive meanwhile are handled before the new run starts.
      await condition(allHandlersFinished);
      await opts.continueAsNew(targetBuildChanged() ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {});
    }
    if (!woke && opts.isFinal()) return;
  }
}
