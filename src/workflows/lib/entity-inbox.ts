/**
 * What every entity workflow does with the provider's events: applies each eventId once
 * (across continue-as-new, via the snapshot), never lets an older status overwrite a newer
 * one, and tells subscribed flows about every change.
 */
import { getExternalWorkflowHandle } from '@temporalio/workflow';
import { entityStateSignal } from '../../shared/messages';
import { addressed } from '../../shared/signal-origin';
import type { EntityKind } from '../../shared/ids';
import { isNewer, statusOf } from '../../shared/event-status';
import type { EntityState, ProviderEvent } from '../../shared/types';

/** eventIds remembered for de-duplication; older ones are forgotten first. */
const MAX_REMEMBERED_EVENTS = 2000;


export interface InboxSnapshot {
  state: EntityState;
  seenEventIds: string[];
  subscribers: string[];
}

export function emptySnapshot(kind: EntityKind, entityId: string): InboxSnapshot {
  return { state: { kind, entityId, eventCount: 0 }, seenEventIds: [], subscribers: [] };
}

export class EntityInbox {
  readonly state: EntityState;
  readonly #seen: Set<string>;
  readonly #subscribers: Set<string>;
  #notifyPending = false;

  constructor(snapshot: InboxSnapshot) {
    this.state = { ...snapshot.state };
    this.#seen = new Set(snapshot.seenEventIds);
    this.#subscribers = new Set(snapshot.subscribers);
  }

  /** True when this eventId was applied (among the last MAX_REMEMBERED_EVENTS). */
  hasSeen(eventId: string): boolean {
    return this.#seen.has(eventId);
  }

  /** Records the event; false when its eventId was applied before. */
  accept(event: ProviderEvent): boolean {
    if (this.#seen.has(event.eventId)) return false;
    this.#seen.add(event.eventId);
    if (this.#seen.size > MAX_REMEMBERED_EVENTS) this.#seen.delete(this.#seen.values().next().value as string);
    this.state.eventCount++;
    const status = statusOf(event);
    if (status !== undefined) this.#applyStatus(status, event.data, event.createdAt, event.eventId, 'webhook');
    return true;
  }

  /** A status learned by polling: applied under the same ordering rule. */
  observe(status: string, data: Record<string, unknown>, at: number): void {
    this.#applyStatus(status, data, at, this.state.lastEventId, 'poll');
  }

  /** Overrides the status (our own successful operation, e.g. a freeze): always newest. */
  set(status: string, data: Record<string, unknown>, at: number): void {
    Object.assign(this.state, { status, data, source: 'operation', lastEventAt: Math.max(at, this.state.lastEventAt ?? 0) });
    this.#notifyPending = true;
  }

  /** The entity's poll failed for good: subscribers hear of it and fail with it. */
  failWatch(failure: NonNullable<EntityState['watchFailure']>): void {
    this.state.watchFailure = failure;
    this.#notifyPending = true;
  }

  clearWatchFailure(): void {
    delete this.state.watchFailure;
  }

  /** Something subscribers should hear of happened without a status change (an eSIM alert). */
  touch(): void {
    if (this.#subscribers.size > 0) this.#notifyPending = true;
  }

  subscribe(workflowId: string): void {
    this.#subscribers.add(workflowId);
    // Told once any event was applied, not only once a status is known: an eSIM alert (no status) applied before the
    // subscription must reach it. Both can arrive in one workflow task: the SDK hands a buffered signal to its handler
    // as the handler is registered, so the events' handler (registered first) takes an event that came after the subscription.
    if (this.state.status !== undefined || this.state.eventCount > 0) this.#notifyPending = true;
  }

  get notifyPending(): boolean {
    return this.#notifyPending;
  }

  get hasSubscribers(): boolean {
    return this.#subscribers.size > 0;
  }

  /** Sends the current state to every subscriber; a subscriber that has closed is dropped. */
  async notifySubscribers(): Promise<void> {
    this.#notifyPending = false;
    const state = { ...this.state };
    await Promise.all(
      [...this.#subscribers].map(async (id) => {
        try {
          await getExternalWorkflowHandle(id).signal(entityStateSignal, addressed(id, state));
        } catch {
          this.#subscribers.delete(id);
        }
      }),
    );
  }

  snapshot(): InboxSnapshot {
    return { state: { ...this.state }, seenEventIds: [...this.#seen], subscribers: [...this.#subscribers] };
  }

  #applyStatus(status: string, data: Record<string, unknown>, at: number, eventId: string | undefined, source: EntityState['source']): void {
    if (!isNewer(this.state, status, at)) return;
    Object.assign(this.state, { status, data, source, lastEventId: eventId, lastEventAt: at });
    this.#notifyPending = true;
  }
}

// The ordering rule and an event's status are pure, shared with the bridge (late deliveries).
export { isNewer, statusOf } from '../../shared/event-status';
