/**
 * The entity workflow's fallback poll: when a subscribed flow asks for it (a WatchPlan), the
 * entity waits for a webhook until the plan's `pollFrom`, then reads the provider with growing
 * intervals until the status is final or the plan's deadline passes. What it reads goes into
 * the inbox like a webhook, under the same ordering rule, and reaches every subscriber. A
 * later subscriber's plan only extends the deadline of a poll under way.
 *
 * A read that fails (the provider down for minutes, an answer we cannot read, a 404 while the
 * provider has not caught up with an entity the flow just created) is logged and tried again at
 * the next interval: only the deadline ends the wait. A 404 for an entity the waiting flow did not
 * create (trackPayout of an unknown merOrderNo) still tells the flow at once.
 */
import { condition, log } from '@temporalio/workflow';
import { isFinal } from '../../shared/statuses';
import type { WatchPlan } from '../../shared/types';
import type { EntityInbox } from './entity-inbox';
import { applicationCause } from './provider';
import { isAwaitedKind, readEntity } from './entity-reads';

/** Each read retries a few times within the interval; then the watch waits for its next one. */
const pollReadRetry = { retry: { maximumAttempts: 3, maximumInterval: '10 seconds' } } as const;

export class EntityWatch {
  #plan: WatchPlan | undefined;

  /** `plan`: a poll under way when the previous run continued-as-new. */
  constructor(
    private readonly inbox: EntityInbox,
    plan?: WatchPlan,
  ) {
    if (plan) this.#start(plan);
  }

  /** The poll under way, if any: carried across continue-as-new. */
  get plan(): WatchPlan | undefined {
    return this.#plan;
  }

  request(plan: WatchPlan): void {
    if (this.#settled()) return;
    if (this.#plan) {
      const notFoundIsLag = this.#plan.notFoundIsLag || plan.notFoundIsLag ? { notFoundIsLag: true } : {};
      this.#plan = { ...this.#plan, deadlineAt: Math.max(this.#plan.deadlineAt, plan.deadlineAt), ...notFoundIsLag };
    }
    else this.#start(plan);
  }

  #settled(): boolean {
    return !isAwaitedKind(this.inbox.state.kind) || isFinal(this.inbox.state.kind, this.inbox.state.status);
  }

  #start(plan: WatchPlan): void {
    this.#plan = plan;
    this.inbox.clearWatchFailure();
    void this.#run().finally(() => (this.#plan = undefined));
  }

  async #run(): Promise<void> {
    const settled = () => this.#settled();
    const until = (at: number) => condition(settled, Math.max(1, at - Date.now()));
    if (this.#plan!.pollFrom > Date.now() && (await until(this.#plan!.pollFrom))) return;
    const { kind, entityId } = this.inbox.state;
    if (!isAwaitedKind(kind)) return;
    log.info('no conclusive webhook in time: the entity polls the provider', { kind, entityId });
    let interval = this.#plan!.pollInitialIntervalMs;
    while (!settled() && Date.now() < this.#plan!.deadlineAt) {
      try {
        const seen = await readEntity(kind, entityId, pollReadRetry);
        this.inbox.observe(seen.status, seen.data, Date.now());
      } catch (err) {
        const cause = applicationCause(err);
        const failure = { type: cause?.type ?? 'ProviderUnavailable', message: cause?.message ?? String(err), details: [...(cause?.details ?? [])] };
        if (failure.type === 'NotFound' && !this.#plan!.notFoundIsLag) {
          this.inbox.failWatch(failure);
          return;
        }
        log.warn('the entity could not be read: trying again at the next interval, until the deadline', { kind, entityId, failureType: failure.type, nextInMs: interval });
      }
      if (await until(Math.min(Date.now() + interval, this.#plan!.deadlineAt))) return;
      interval = Math.min(interval * 2, this.#plan!.pollMaxIntervalMs);
    }
  }
}
