/**
 * Reconciliation's share of the window, kept by the run itself. Its reads share the flows' queues
 * (at the lowest priority, so they never go before a flow's call), whose rate is the whole
 * window: the queue cannot also cap reconciliation at its share, so the run does. It sends at most
 * `readsPerWindow` reads at once and, once the batch is answered, waits until the provider's
 * window that the last of them landed in has ended (X-RateLimit-Reset, read back by each read):
 * however late a batch was dispatched (behind flows), no fixed window of the provider's sees more
 * than one batch, and a batch that fits in a window goes every window, the physical limit. An
 * answer without a believable reset waits a whole window after it instead. A continued run takes its predecessor's pace over.
 */
import { sleep } from '@temporalio/workflow';
import type { ReadBudget, WindowedRead } from '../../shared/reconciliation';

export type Paced = <T, R extends WindowedRead>(items: readonly T[], read: (item: T) => Promise<R>) => Promise<R[]>;

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
      const batch = await Promise.all(items.slice(i, i + this.budget.readsPerWindow).map(read));
      results.push(...batch);
      this.nextReadAt = nextWindowAt(batch, Date.now(), this.budget.windowMs);
    }
    return results;
  };
}

/**
 * When a batch answered at `now` may be followed: past the latest window its reads landed in, by a
 * margin for a clock a little behind the provider's. A reset that is absent or not believable (not
 * within a window from now, or older than a day: seconds for milliseconds) counts as a whole window
 * from now.
 */
export function nextWindowAt(batch: readonly WindowedRead[], now: number, windowMs: number): number {
  const margin = Math.min(1_000, Math.ceil(windowMs / 50));
  const ends = batch.map(({ windowResetAt: reset }) => (reset !== undefined && reset > now - DAY_MS && reset <= now + windowMs ? reset + margin : now + windowMs));
  return Math.max(now, ...ends);
}

const DAY_MS = 24 * 3_600_000;

/** Reads all at once: runs started before pacing (their histories replay without its timers). */
export const unpaced: Paced = (items, read) => Promise.all(items.map(read));
