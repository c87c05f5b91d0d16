/**
 * A run's report reaches the worker's metrics and log (activities/reconciliation.ts recordReport):
 * reconciliation_differences{reconciliation,kind} for every kind of that reconciliation (zeros included, so a
 * corrected difference stops alerting), flows_stuck{flow_kind}, one summary line.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { createReconciliationActivities } from '../../src/activities/reconciliation';
import { createRegistry, reconciliationMetrics } from '../../src/observability/metrics';
import type { DriftReport } from '../../src/shared/reconciliation';

const report = (kind: DriftReport['kind'], differences: DriftReport['differences']): DriftReport => ({
  kind,
  startedAt: '2026-11-23T00:00:00.000Z',
  finishedAt: '2026-11-23T00:01:00.000Z',
  checked: 10,
  differences,
  corrected: 0,
});

test('the last run of each reconciliation sets its gauges and logs one summary line', async () => {
  const registry = createRegistry();
  const { recordReport, readReconcileBudget } = createReconciliationActivities({ provider: {} as never, bins: {} as never, reconciliationMetrics: reconciliationMetrics(registry), reconcileBudget: { windowMs: 60_000, share: 0.1 } });
  const env = new MockActivityEnvironment();
  const lines: string[] = [];
  const logged = jest.spyOn(env.context.log, 'info').mockImplementation((message: string) => void lines.push(message));

  await env.run(recordReport, report('cards', [{ kind: 'card-balance-differs', ids: { cardId: 'a' } }, { kind: 'card-balance-differs', ids: { cardId: 'b' } }, { kind: 'card-unknown-at-provider', ids: { cardId: 'c' } }]));
  await env.run(recordReport, report('stuck', [{ kind: 'flow-stuck', ids: { workflowId: 'w', flowKind: 'sendPayout' } }]));
  let text = await registry.metrics();
  expect(text).toContain('reconciliation_differences{reconciliation="reconcile-cards",kind="card-balance-differs"} 2');
  expect(text).toContain('reconciliation_differences{reconciliation="reconcile-cards",kind="card-unknown-at-provider"} 1');
  expect(text).toContain('reconciliation_differences{reconciliation="reconcile-cards",kind="card-status-differs"} 0');
  expect(text).toContain('flows_stuck{flow_kind="sendPayout"} 1');
  expect(text).toContain('flows_stuck{flow_kind="fundCard"} 0');
  // When each ended (the report's finishedAt): alerts read the figures of the worker that made the latest run.
  expect(text).toContain(`reconciliation_last_run_timestamp_seconds{reconciliation="reconcile-cards"} ${Date.parse('2026-11-23T00:01:00.000Z') / 1000}`);
  expect(text).toContain(`reconciliation_last_run_timestamp_seconds{reconciliation="sweep-stuck"} ${Date.parse('2026-11-23T00:01:00.000Z') / 1000}`);
  expect(text).not.toContain('reconciliation_last_run_timestamp_seconds{reconciliation="reconcile-money"}');
  expect(text).toContain(`reconciliation_last_active_timestamp_seconds{reconciliation="reconcile-cards"} ${Date.parse('2026-11-23T00:01:00.000Z') / 1000}`);
  // A run (or a continued one) starting marks its reconciliation alive: a long run does not look dead.
  const before = Math.floor(Date.now() / 1000);
  await env.run(readReconcileBudget, { reconciliation: 'reconcile-money' });
  const alive = Number(/reconciliation_last_active_timestamp_seconds\{reconciliation="reconcile-money"\} (\d+)/.exec(await registry.metrics())?.[1]);
  expect(alive).toBeGreaterThanOrEqual(before);
  expect(lines).toEqual(['reconcile-cards: 10 checked, 3 difference(s) (2 card-balance-differs, 1 card-unknown-at-provider), 0 corrected', 'sweep-stuck: 10 checked, 1 difference(s) (1 flow-stuck), 0 corrected']);

  await env.run(recordReport, report('cards', []));
  text = await registry.metrics();
  expect(text).toContain('reconciliation_differences{reconciliation="reconcile-cards",kind="card-balance-differs"} 0');
  expect(lines[2]).toBe('reconcile-cards: 10 checked, no difference');
  logged.mockRestore();
});
