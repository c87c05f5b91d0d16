/**
 * providerEntity: one workflow per KYC cardholder, eSIM order, eSIM or payout, started by the
 * bridge (signal-with-start) or by the flow that waits for it, whichever comes first. It holds
 * the provider's events for that entity, so an event that arrives before any flow has learned
 * the entity's id is never lost, and polls the provider when no webhook comes in time. Flows
 * only subscribe and wait: data flows from the provider through the entity to them. A late event for an entity closed long ago starts a fresh run
 * that records it, is searchable, and closes after its linger: no error loop.
 */
import { makeContinueAsNewFunc, upsertSearchAttributes } from '@temporalio/workflow';
import type { EntityKind } from '../shared/ids';
import { FLOW_KIND } from '../shared/search-attributes';
import { isFinal } from '../shared/statuses';
import type { EntityState, EsimWatchState, WatchPlan } from '../shared/types';
import { EntityInbox, emptySnapshot, type InboxSnapshot } from './lib/entity-inbox';
import { runEntityLoop, wireInbox } from './lib/entity-loop';
import { EntityWatch } from './lib/entity-watch';
import { EsimWatch } from './lib/esim-watch';
import { declareVersioning } from './lib/versioning';
import { trustedStart } from './lib/trusted-signal';

export interface ProviderEntityInput {
  kind: EntityKind;
  entityId: string;
  snapshot?: InboxSnapshot;
  /** kind esim: usage and alerts, carried across continue-as-new. */
  esim?: EsimWatchState;
  /** The fallback poll under way, carried across continue-as-new. */
  watch?: WatchPlan;
  lingerMs?: number;
  maxHistoryEvents?: number;
}

export async function providerEntity(started: ProviderEntityInput): Promise<EntityState> {
  const input = trustedStart(started, ['kind', 'entityId', 'lingerMs', 'maxHistoryEvents']);
  const inbox = new EntityInbox(input.snapshot ?? emptySnapshot(input.kind, input.entityId));
  const esim = input.kind === 'esim' ? new EsimWatch(input.entityId, input.esim) : undefined;
  esim?.wire();
  // An alert changes no status, but subscribers hear of it with the entity's state.
  const watch = new EntityWatch(inbox, input.watch);
  wireInbox(inbox, watch, (event) => esim?.record(event) && inbox.touch());
  upsertSearchAttributes([{ key: FLOW_KIND, value: `entity:${input.kind}` }]);
  await runEntityLoop(inbox, {
    isFinal: () => isFinal(input.kind, inbox.state.status),
    lingerMs: input.lingerMs,
    maxHistoryEvents: input.maxHistoryEvents,
    continueAsNew: (options) => makeContinueAsNewFunc<typeof providerEntity>(options)({ ...input, snapshot: inbox.snapshot(), watch: watch.plan, ...(esim ? { esim: esim.state } : {}) }),
  });
  return inbox.state;
}

// docs/versioning.md: lives as long as its entity, pinned to each run's build; moves to a new build at a continue-as-new (lib/entity-loop.ts).
declareVersioning('PINNED', providerEntity);
