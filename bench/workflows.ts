/** The bare baselines: the least a workflow can do for each measure, on the same server and worker settings. */
import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';

const { noop, fundOnce } = proxyActivities<{ noop(): Promise<void>; fundOnce(): Promise<void> }>({ startToCloseTimeout: '30 seconds' });

export const releaseSignal = defineSignal('release');

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
