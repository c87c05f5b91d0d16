/**
 * Issue 51: reconcile-money reads from where its last run STARTED, not from a fixed window, so a slow
 * run, a paused schedule or a tight budget leaves no gap; bounded by MAX_LOOK_BACK_MS, and a run that
 * had to cap says so (its report's lookBack, a warning, reconciliation_look_back_capped).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { createReconciliationActivities } from '../../src/activities/reconciliation';
import { createRegistry, reconciliationMetrics } from '../../src/observability/metrics';
import { LOOK_BACK_OVERLAP_MS, MAX_LOOK_BACK_MS, lookBackFrom, type LookBack } from '../../src/shared/reconcile-checks';
import type { DriftReport } from '../../src/shared/reconciliation';
import { reconcileNow } from '../../src/starter/reconciliation';
import { startStack, type Stack } from '../helpers/stack';

jest.setTimeout(180_000);

const HOUR = 3_600_000;
const now = Date.parse('2026-11-28T12:00:00.000Z');

describe('lookBackFrom', () => {
  test('after a paused schedule or a slow run, the run reads from the last start (less the overlap), not the default window', () => {
    expect(lookBackFrom(now, now - 5 * HOUR, 2 * HOUR)).toEqual({ sinceMs: now - 5 * HOUR - LOOK_BACK_OVERLAP_MS, from: 'last-run', lastRunStartedAt: now - 5 * HOUR });
  });
  test('never less than the default window; the default when no run completed before', () => {
    expect(lookBackFrom(now, now - 10 * 60_000, 2 * HOUR)).toMatchObject({ sinceMs: now - 2 * HOUR, from: 'last-run' });
    expect(lookBackFrom(now, undefined, 2 * HOUR)).toEqual({ sinceMs: now - 2 * HOUR, from: 'default' });
  });
  test('a last run older than the maximum look-back is capped, and says so', () => {
    expect(lookBackFrom(now, now - 9 * 24 * HOUR, 2 * HOUR)).toEqual({ sinceMs: now - MAX_LOOK_BACK_MS, from: 'last-run', lastRunStartedAt: now - 9 * 24 * HOUR, capped: true });
  });
});

test('a capped run sets reconciliation_look_back_capped and warns; the next uncapped run clears it', async () => {
  const registry = createRegistry();
  const { recordReport } = createReconciliationActivities({ provider: {} as never, bins: {} as never, reconciliationMetrics: reconciliationMetrics(registry), reconcileBudget: { windowMs: 60_000, share: 0.1 } });
  const env = new MockActivityEnvironment();
  const warned = jest.spyOn(env.context.log, 'warn').mockImplementation(() => undefined);
  const report = (lookBack: LookBack) => ({ kind: 'money', startedAt: new Date(now).toISOString(), finishedAt: new Date(now).toISOString(), checked: 0, differences: [], corrected: 0, lookBack }) as DriftReport;
  await env.run(recordReport, report(lookBackFrom(now, now - 9 * 24 * HOUR, 2 * HOUR)));
  expect(await registry.metrics()).toContain('reconciliation_look_back_capped{reconciliation="reconcile-money"} 1');
  expect(warned).toHaveBeenCalledWith(expect.stringMatching(/maximum look-back/), expect.objectContaining({ capped: true }));
  await env.run(recordReport, report(lookBackFrom(now, now - HOUR, 2 * HOUR)));
  expect(await registry.metrics()).toContain('reconciliation_look_back_capped{reconciliation="reconcile-money"} 0');
  warned.mockRestore();
});

describe('on the dev server', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ profile: 'contract' });
  });
  afterAll(async () => stack?.close());

  test('each run not told `since` reads from the start of the last completed run that was not told it either', async () => {
    const target = { client: stack.client, taskQueue: stack.taskQueue };
    const run = async (input = {}) => (await reconcileNow(target, ['money'], input))[0] as DriftReport & { lookBack?: LookBack };
    const first = await run();
    expect(first.lookBack).toMatchObject({ from: 'default' });
    const second = await run();
    expect(second.lookBack).toMatchObject({ from: 'last-run', lastRunStartedAt: Date.parse(first.startedAt) });
    expect(second.lookBack!.sinceMs).toBeLessThanOrEqual(Date.parse(first.startedAt) - LOOK_BACK_OVERLAP_MS);
    // A run told how far back to look reads that, and is no link of the chain.
    const told = await run({ since: '5m' });
    expect(told.lookBack).toMatchObject({ from: 'input' });
    const third = await run();
    expect(third.lookBack).toMatchObject({ from: 'last-run', lastRunStartedAt: Date.parse(second.startedAt) });
  });
});
