/** The SDK's log lines through our logger: an outage of Temporal reads as a few lines, repeats are held back. */
import type { LogEntry } from '@temporalio/worker';
import { createLogger } from '../../src/logging';
import { SdkLogGate, forwardSdkLogs } from '../../src/observability/sdk-logs';

const retryWarning = (n: number): LogEntry => ({
  level: 'WARN',
  message: `gRPC call poll_workflow_task_queue retried ${n} times`,
  timestampNanos: 0n,
  meta: { sdkComponent: 'core', target: 'temporalio_client::retry', error: 'status: Unavailable, message: "error trying to connect: tcp connect error: Connection refused (os error 111)"' },
});

function gate(now: { t: number }, quietMs = 60_000) {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger('worker', { level: 'debug', write: (l) => lines.push(JSON.parse(l)) });
  return { lines, gate: new SdkLogGate(log, { temporalAddress: '10.0.0.7:7233', now: () => now.t, quietMs }) };
}

describe('the SDK log gate', () => {
  test('a ten-minute outage with a retry warning every 100 ms reads as one line a minute, saying what is down and since when', () => {
    const now = { t: Date.parse('2026-11-23T03:00:00Z') };
    const { lines, gate: g } = gate(now);
    for (let i = 0; i < 6000; i++) {
      g.write(retryWarning(i));
      now.t += 100;
    }
    g.flush();
    expect(lines.length).toBeLessThanOrEqual(12);
    expect(lines[0]).toMatchObject({ level: 'warn', msg: expect.stringMatching(/^Temporal unreachable/), temporalAddress: '10.0.0.7:7233', since: '2026-11-23T03:00:00.000Z' });
    expect(lines[0].lastError).toMatch(/Connection refused/);
    expect(lines.slice(1, -1).every((l) => l.msg === 'Temporal still unreachable' && l.since === '2026-11-23T03:00:00.000Z')).toBe(true);
    const last = lines[lines.length - 1];
    expect(last).toMatchObject({ level: 'warn', msg: 'Temporal still unreachable at shutdown', since: '2026-11-23T03:00:00.000Z', downForS: 600 });
    const held = lines.reduce((sum, l) => sum + ((l.linesHeld as number) ?? 0), 0);
    expect(held + lines.length - 1).toBe(6000);
  });

  test('closes the outage once the core is quiet and the frontend answers, not on a pause between retries', async () => {
    const now = { t: Date.now() };
    const answers = [false, false, true];
    const probed: boolean[] = [];
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger('worker', { write: (l) => lines.push(JSON.parse(l)) });
    const g = new SdkLogGate(log, { temporalAddress: 'a:7233', now: () => now.t, quietMs: 30, probe: async () => (probed.push(answers[probed.length]), answers[probed.length - 1]) });
    g.write(retryWarning(1));
    await new Promise((r) => setTimeout(r, 60));
    expect(lines.map((l) => l.msg)).toEqual([expect.stringMatching(/^Temporal unreachable/)]);
    await new Promise((r) => setTimeout(r, 200));
    expect(probed).toEqual([false, false, true]);
    expect(lines.map((l) => l.msg)).toEqual([expect.stringMatching(/^Temporal unreachable/), 'Temporal reachable again']);
    g.flush();
    expect(lines).toHaveLength(2);
  });

  test('writes any other repeated line once a minute at most, the next one saying how many it stood for', () => {
    const now = { t: Date.parse('2026-11-23T03:00:00Z') };
    const { lines, gate: g } = gate(now);
    const entry = (n: number): LogEntry => ({ level: 'ERROR', message: `Workflow task failed, attempt ${n}`, timestampNanos: 0n, meta: { sdkComponent: 'worker', taskQueue: 'q' } });
    for (let i = 0; i < 130; i++) {
      g.write(entry(i));
      now.t += 1000;
    }
    g.write({ level: 'INFO', message: 'another line', timestampNanos: 0n, meta: { sdkComponent: 'worker' } });
    expect(lines.map((l) => [l.level, l.linesHeld ?? 0])).toEqual([['error', 0], ['error', 59], ['error', 59], ['info', 0]]);
    expect(lines[1].repeatedSince).toBe('2026-11-23T03:00:00.000Z');
  });

  test('forwards the core at WARN (INFO with LOG_LEVEL=debug) and everything else at ERROR', () => {
    const log = createLogger('worker', { write: () => undefined });
    expect(forwardSdkLogs(log, 'info', { temporalAddress: 'x' }).logging).toEqual({ filter: expect.stringContaining('temporalio_sdk_core=WARN'), forward: {} });
    expect(forwardSdkLogs(log, 'debug', { temporalAddress: 'x' }).logging.filter).toContain('temporalio_sdk_core=INFO');
  });
});
