/**
 * Issue 29's pure parts: which flows mark themselves OUTCOME_UNKNOWN (every one that can end so,
 * registered under its own name), and the gauge that counts the unsettled ones, against a fake
 * visibility that answers, fails, or hangs. The real stack: test/observability/outcome-unknown.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { outcomeUnknownMetrics, type UnsettledOutcomesSource } from '../../src/observability/metrics';
import { FLOW_FAILURES, type FlowName } from '../../src/shared/failures';
import { OUTCOME_UNKNOWN_FLOWS, UNKNOWN_OUTCOME_TYPES, isUnknownOutcomeType } from '../../src/shared/outcome-unknown';
import * as workflows from '../../src/workflows';

describe('the flows that mark themselves OUTCOME_UNKNOWN', () => {
  it('are every flow that can end with an unknown outcome, bar the card workflow (its updates fail, it goes on) and the settlement itself', () => {
    const canEndUnknown = (Object.keys(FLOW_FAILURES) as FlowName[]).filter((flow) => (FLOW_FAILURES[flow] as readonly string[]).some(isUnknownOutcomeType));
    expect([...OUTCOME_UNKNOWN_FLOWS].sort()).toEqual(canEndUnknown.filter((flow) => flow !== 'cardLifecycle' && flow !== 'settleOutcome').sort());
    expect(OUTCOME_UNKNOWN_FLOWS).not.toContain('trackPayout');
    expect(UNKNOWN_OUTCOME_TYPES).toEqual(['OutcomeUnknown', 'SubmissionOutcomeUnknown']);
    expect(isUnknownOutcomeType('ValidationFailed')).toBe(false);
  });

  it('are each registered through markingUnknownOutcome, under the export name, the function keeping its name', () => {
    const index = readFileSync(join(__dirname, '../../src/workflows/index.ts'), 'utf8');
    for (const flow of OUTCOME_UNKNOWN_FLOWS) {
      expect(index).toMatch(new RegExp(`^const ${flow} = markingUnknownOutcome\\(${flow}Flow\\);$`, 'm'));
      const registered = (workflows as Record<string, unknown>)[flow] as ((...args: unknown[]) => unknown) | undefined;
      expect(typeof registered).toBe('function');
      // Temporal takes the type from the export's name; a client starting it by reference takes `.name`.
      expect(registered!.name).toBe(flow);
    }
  });
});

describe('outcome_unknown_unsettled', () => {
  const flows = (...types: string[]) => types.map((type) => ({ type }));

  function gauge(source: Partial<UnsettledOutcomesSource> & Pick<UnsettledOutcomesSource, 'read'>) {
    const registry = new Registry();
    const failures: unknown[] = [];
    outcomeUnknownMetrics(registry, { kinds: ['fundCard', 'sendPayout'], onReadFailed: (err) => failures.push(err), minIntervalMs: 0, ...source });
    const scrape = async () => {
      const text = await registry.metrics();
      return Object.fromEntries([...text.matchAll(/^outcome_unknown_unsettled\{flow_kind="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
    };
    return { registry, failures, scrape };
  }

  it('counts the unsettled flows by workflow type, zeros included, and names what it counts', async () => {
    const { registry, scrape } = gauge({ read: async () => flows('fundCard', 'fundCard', 'issueCard') });
    expect(await scrape()).toEqual({ fundCard: 2, sendPayout: 0, issueCard: 1 });
    expect(await registry.metrics()).toContain('# HELP outcome_unknown_unsettled Flows that ended OutcomeUnknown (or SubmissionOutcomeUnknown) and have no settlement yet');
  });

  it('keeps the last figures when a read fails, says so once, and takes the next answer', async () => {
    let answer: () => Promise<Array<{ type: string }>> = async () => flows('fundCard');
    const { failures, scrape } = gauge({ read: () => answer() });
    expect(await scrape()).toEqual({ fundCard: 1, sendPayout: 0 });
    answer = async () => Promise.reject(new Error('14 UNAVAILABLE: connection refused'));
    expect(await scrape()).toEqual({ fundCard: 1, sendPayout: 0 });
    expect(await scrape()).toEqual({ fundCard: 1, sendPayout: 0 });
    expect(failures).toHaveLength(1);
    answer = async () => flows();
    expect(await scrape()).toEqual({ fundCard: 0, sendPayout: 0 });
    answer = async () => Promise.reject(new Error('down again'));
    await scrape();
    expect(failures).toHaveLength(2);
  });

  it('shows nothing before a read answered: not knowing is not zero', async () => {
    const { failures, scrape } = gauge({ read: async () => Promise.reject(new Error('unreachable')) });
    expect(await scrape()).toEqual({});
    expect(failures).toHaveLength(1);
  });

  it('does not hold a scrape up for a slow read, and shows its answer once it came', async () => {
    let release: (value: Array<{ type: string }>) => void = () => undefined;
    const { scrape } = gauge({ read: () => new Promise((resolve) => (release = resolve)), scrapeWaitMs: 50 });
    const started = Date.now();
    expect(await scrape()).toEqual({});
    expect(Date.now() - started).toBeLessThan(1000);
    release(flows('sendPayout'));
    await new Promise((r) => setImmediate(r));
    expect(await scrape()).toEqual({ fundCard: 0, sendPayout: 1 });
  });

  it('gives up on a read that never answers, and begins another', async () => {
    let reads = 0;
    const { failures, scrape } = gauge({ read: () => (++reads === 1 ? new Promise(() => undefined) : Promise.resolve(flows('fundCard'))), scrapeWaitMs: 20, readTimeoutMs: 60 });
    expect(await scrape()).toEqual({});
    await new Promise((r) => setTimeout(r, 100));
    expect(failures).toHaveLength(1);
    expect(await scrape()).toEqual({ fundCard: 1, sendPayout: 0 });
    expect(reads).toBe(2);
  });

  it('reads at most once per interval, however often it is scraped', async () => {
    let reads = 0;
    const { scrape } = gauge({ read: async () => (reads++, flows('fundCard')), minIntervalMs: 60_000 });
    for (let i = 0; i < 5; i++) expect(await scrape()).toEqual({ fundCard: 1, sendPayout: 0 });
    expect(reads).toBe(1);
  });
});
