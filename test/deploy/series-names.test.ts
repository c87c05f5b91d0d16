/**
 * Every expression of deploy/prometheus/alerts.yml and deploy/grafana/*.json names a series that
 * exists: one our processes declare (src/observability/*.ts), `up` (Prometheus' own), one the rules
 * file records (`- record:`), one our workflows emit through the SDK's metric meter (named in
 * workflow code, exported under that name only once a workflow counted something:
 * provider_status_unknown, proven on a worker's /metrics by test/observability/unknown-status.test.ts),
 * or one a real worker's /metrics exports (the Temporal SDK's, scraped here from a worker process on
 * the run's dev server after a workflow task failed, an activity failed, a workflow completed and one
 * failed, so its failure and completion counters and latency histograms are there; their names carry
 * no _total and latencies are milliseconds).
 */
import { createDataConverter } from '../../src/codec/payload-codec';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../src/ports';
import { spawnApp, type AppProcess } from '../../tools/processes';
import { TEST_CODEC_KEY, TEST_PIN_KEYS, temporalAddress } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { UNKNOWN_STATUS_METRIC } from '../../src/workflows/lib/await-outcome';
import { declaredName, ourDeclaredSeries, seriesNamed } from './promql-names';

const ROOT = join(__dirname, '../..');

function alertExpressions(): string[] {
  const text = readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8');
  // `expr:` on one line, or a block scalar (`expr: |`) whose indented lines follow.
  return [...text.matchAll(/expr: (?:\|\n((?:\s{10,}.*\n)+)|(.*)\n)/g)].map((m) => (m[1] ?? m[2]).trim());
}

/** The series the rules file records itself (`- record: name`). */
function recordedSeries(): string[] {
  return [...readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8').matchAll(/- record: (\S+)/g)].map((m) => m[1]);
}

function dashboardExpressions(): string[] {
  const dir = join(ROOT, 'deploy/grafana');
  const exprs: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === 'expr' && typeof v === 'string') exprs.push(v);
        else walk(v);
      }
    }
  };
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.json'))) walk(JSON.parse(readFileSync(join(dir, f), 'utf8')));
  return exprs;
}

describe('the series that alerts and dashboard name', () => {
  let worker: AppProcess | undefined;
  afterAll(async () => worker?.stop());

  test('the expressions are found and parsed', () => {
    expect(alertExpressions().length).toBe([...readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8').matchAll(/- (alert|record): /g)].length);
    expect(dashboardExpressions().length).toBeGreaterThan(10);
    expect(seriesNamed('histogram_quantile(0.95, sum by (le, task_queue) (rate(x_bucket{a=~"b|c"}[5m]))) > 2 and on (job) up == 0')).toEqual(['x_bucket', 'up']);
    expect(seriesNamed('(x unless x offset 1h) and on () present_over_time(up{job="w"}[1h] offset 26h) or absent_over_time(y{r="s"}[7d])')).toEqual(['x', 'up', 'y']);
  });

  test('every series an alert pages on has a panel on the dashboard, so the page can be read there', () => {
    const onDashboard = new Set(dashboardExpressions().flatMap((expr) => seriesNamed(expr).map((s) => s.replace(/_(bucket|sum|count)$/, ''))));
    const recorded = new Set(recordedSeries());
    const missing = [...new Set(alertExpressions().flatMap((expr) => seriesNamed(expr)))]
      .map((s) => s.replace(/_(bucket|sum|count)$/, ''))
      .filter((s) => !recorded.has(s) && !onDashboard.has(s));
    expect(missing).toEqual([]);
  });

  test('each is declared by our processes or exported by a real worker (the Temporal SDK)', async () => {
    const metricsPort = await freePort();
    const taskQueue = `series-${randomUUID()}`;
    worker = spawnApp('worker', 'src/worker.ts', {
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: taskQueue,
      METRICS_PORT: String(metricsPort),
      PROVIDER_BASE_URL: `http://127.0.0.1:${await freePort()}`, // nothing listens: the activity fails
      PAYLOAD_CODEC_KEY: TEST_CODEC_KEY,
      PAYLOAD_CODEC_KEY_ID: 'test',
      PIN_SEAL_PRIVATE_KEY: TEST_PIN_KEYS.privateKey,
      WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE!,
    }, '/dev/null');
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    await waitUntil(() => fetch(`${metricsUrl}/ready`).then((r) => r.ok, () => false), 90_000, 'the worker ready');
    const connection = await Connection.connect({ address: temporalAddress() });
    try {
      // Our payload key: the worker refuses a plain input (shared/refused-payload.ts).
      const client = new Client({ connection, dataConverter: createDataConverter({ keyId: 'test', key: TEST_CODEC_KEY }) });
      // A workflow type no worker has: its workflow task fails. A card issue whose provider is down: its activity fails.
      // A stuck-flow sweep (it reads Temporal only) completes; one given a look-back that is no duration fails.
      await client.workflow.start('noSuchWorkflow', { taskQueue, workflowId: `series-bad-${taskQueue}`, args: [] });
      await client.workflow.start('sweep-stuck', { taskQueue, workflowId: `series-sweep-${taskQueue}`, args: [{}] });
      await client.workflow.start('sweep-stuck', { taskQueue, workflowId: `series-sweep-bad-${taskQueue}`, args: [{ since: 'not a duration' }] });
      await client.workflow.start('issueCard', { taskQueue, workflowId: `series-card-${taskQueue}`, args: [{ cardBinId: 'bin_visa_basic', initialAmount: 100, firstName: 'Ser', lastName: 'Ies' }] });
      const exported = async () => new Set([...(await (await fetch(`${metricsUrl}/metrics`)).text()).matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]));
      await waitUntil(async () => {
        const names = await exported();
        return ['temporal_workflow_task_execution_failed', 'temporal_activity_schedule_to_start_latency', 'temporal_workflow_completed', 'temporal_workflow_failed'].every((n) => names.has(n));
      }, 60_000, 'the SDK failure and completion counters and latency histograms');
      const known = new Set([...ourDeclaredSeries(ROOT), ...(await exported()), ...recordedSeries(), UNKNOWN_STATUS_METRIC, 'up']);
      const unknown = [...alertExpressions(), ...dashboardExpressions()].flatMap((expr) =>
        seriesNamed(expr)
          .filter((s) => !known.has(declaredName(s, known)))
          .map((s) => `${s} in ${expr}`),
      );
      expect(unknown).toEqual([]);
    } finally {
      await connection.close();
    }
  }, 180_000);
});
