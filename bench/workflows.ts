/** The bare baselines: the least a workflow can do for each measure, on the same server and worker settings. */
import { condition, defineSignal, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';

/** What P5's bare entity makes of a funding: the provider's answer, as fundCard's result carries it. */
export interface BareFunding {
  cardId: string;
  amount: number;
  idempotencyKey: string;
}

const { noop, fundOnce, fundUnderKey } = proxyActivities<{ noop(): Promise<void>; fundOnce(): Promise<void>; fundUnderKey(f: BareFunding): Promise<{ operationId?: string }> }>({
  startToCloseTimeout: '30 seconds',
});

export const releaseSignal = defineSignal('release');
/** P5's baseline update: one funding under the caller's key. */
export const bareFundUpdate = defineUpdate<{ operationId?: string }, [BareFunding]>('bareFund');

/** P3's baseline: one no-op activity. */
export async function bareOneActivity(): Promise<void> {
  await noop();
}

/** P3's control: one activity making fundCard's provider call (a signed POST /cards/{cardId}/funding), nothing else. */
export async function bareProviderCall(): Promise<void> {
  await fundOnce();
}

/** P4's baseline: parked on a signal, with a deadline timer like a flow waiting for its webhook. */
export async function bareParked(): Promise<string> {
  let released = false;
  setHandler(releaseSignal, () => void (released = true));
  await condition(() => released, '2 hours');
  return released ? 'released' : 'timed out';
}

/**
 * P5's baseline: an entity workflow per card, started by update-with-start, whose update makes the
 * same provider call as the card workflow's money update (POST /cards/{cardId}/funding under the
 * caller's key) in one activity, and nothing else: no serialising, no balance read, no records.
 */
export async function bareCardEntity(): Promise<void> {
  setHandler(bareFundUpdate, (funding) => fundUnderKey(funding));
  await condition(() => false);
}
