/**
 * Reconciliation's share of the window, kept by the run itself. Its reads share the flows' queues
 * (at the lowest priority, so they never go before a flow's call), whose rate is the whole
 * window: the queue cannot also cap reconciliation at its share, so the run does. It sends at most
 * `readsPerWindow` reads at once and waits a whole window after each batch has been answered
 * before the next: however late a batch was dispatched (behind flows), no fixed window of the
 * provider's sees more than one batch. A continued run takes its predecessor's pace over.
 */
import { sleep } from '@temporalio/workflow';
import type { ReadBudget } from '../../shared/reconciliation';

export type Paced = <T, R>(items: readonly T[], read: (item: T) => Promise<R>) => Promise<R[]>;

export class ReadPacer {
  constructor(
    private readonly budget: ReadBudget,
    /** When the next batch may start (epoch ms, workflow time). */
    public nextReadAt = 0,
  ) {}

  readonly paced: Paced = async (items, read) => {
    const results = [];
    for (let i = 0; i < items.length; i += this.budget.readsPerWindow) {
      const wait = this.nextReadAt - Date.now();
      if (wait > 0) await sleep(wait);
      results.push(...(await Promise.all(items.slice(i, i + this.budget.readsPerWindow).map(read))));
      this.nextReadAt = Date.now() + this.budget.windowMs;
    }
    return results;
  };
}

/** Reads all at once: runs started before pacing (their histories replay without its timers). */
export const unpaced: Paced = (items, read) => Promise.all(items.map(read));
