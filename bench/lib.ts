/** Small helpers shared by the benchmarks: progress on stderr, percentiles, pacing, polling. */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
export const log = (line: string): void => void process.stderr.write(`bench ${new Date().toISOString().slice(11, 19)}: ${line}\n`);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile (0..100) of the values, nearest rank; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Runs `fn` for each item with at most `concurrency` at once; resolves the results in order. */
export async function mapLimit<T, R>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(lanes);
  return out;
}

/** Calls `fn` `count` times at `perSecond`, on a fixed schedule (a late call does not shift the rest). */
export async function paced<R>(count: number, perSecond: number, fn: (i: number) => Promise<R>): Promise<R[]> {
  const start = Date.now();
  const calls: Promise<R>[] = [];
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    calls.push(fn(i));
  }
  return Promise.all(calls);
}

/** Polls until `check` returns a value other than undefined. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 500): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/**
 * Starts the fundCard or withdrawFromCard workflow itself (CONTRACTS §7), as a service with its own
 * Temporal client does: the benches measure the workflow, which the typed client no longer starts
 * (its card money moves as card updates).
 */
export function startMovementFlow(
  client: { temporal: { client: Client; taskQueue: string } },
  type: 'fundCard' | 'withdrawFromCard',
  input: { cardId: string; amount: number; idempotencyKey?: string; timings?: object },
): Promise<WorkflowHandle> {
  const { client: temporal, taskQueue } = client.temporal;
  return temporal.workflow.start(type, { taskQueue, workflowId: `${type === 'fundCard' ? 'fund-card' : 'withdraw-from-card'}/${input.cardId}/${randomUUID()}`, args: [input] });
}
