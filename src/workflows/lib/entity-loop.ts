/**
 * The life of an entity workflow: wire the inbox to its signals and query, poll the provider
 * for subscribers that ask for it (entity-watch.ts), notify subscribers after every change, continue-as-new before the history grows large (carrying the inbox, so
 * de-duplication survives) or onto its deployment's new build, and close after a quiet linger once the entity is final.
 * The run looks at its target build at every workflow task (lib/roll-over.ts).
 */
import { allHandlersFinished, condition, setHandler, upsertSearchAttributes, workflowInfo, type ContinueAsNewOptions } from '@temporalio/workflow';
import { entityEventQuery, entityObservedSignal, entityStateQuery, providerEventSignal, subscribeSignal } from '../../shared/messages';
import { rollOverOptions, targetBuildChanged, wakeOnRollOver } from './roll-over';
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
  wakeOnRollOver();
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
      await opts.continueAsNew(rollOverOptions());
    }
    if (!woke && opts.isFinal()) return;
  }
}
