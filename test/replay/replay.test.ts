/**
 * Replays every recorded history (test/replay/histories/**) against the current workflow code.
 * A change to src/workflows/** that breaks determinism for a workflow that may be running fails
 * here: ship it behind a patch marker instead (docs/versioning.md). The histories in
 * before-versioned-keys/ (before the idempotency-key patches) and before-one-way-waiting/ (flows
 * that polled by themselves), before-money-edges/, before-coalesced-reads/, before-reconcile-updates/
 * (card workflows before MoneyMovedHour, and no reconciliation histories yet), before-one-marker/ (standalone
 * money flows with three markers and the workflow's signal to the card), before-schedule-names/
 * (the reconciliation workflows under their former camelCase types), before-documents-store/
 * (an onboarding whose documents were paths), before-open-items/ (a fundCard and a card update
 * that ended OutcomeUnknown without opening an item) and before-balance-read-after-answer/ (card
 * workflows whose money updates waited for the card's read) stand for workflows still running
 * and must keep replaying.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { RECONCILIATIONS } from '../../src/shared/reconciliation';
import { createDataConverter } from '../../src/codec/payload-codec';
import { REPLAY_CODEC_ENV } from './codec';
import { createActivities } from '../../src/activities';
import { loadHistory } from './load-history';

const ROOT = join(__dirname, 'histories');

function historyFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? historyFiles(path) : name.endsWith('.json') ? [path] : [];
  });
}

const files = historyFiles(ROOT);


describe('replay of recorded histories', () => {
  beforeAll(() => {
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      // installed by an earlier test file in this process
    }
  });

  test('covers every workflow type', () => {
    const types = new Set(files.map((f) => workflowType(f)));
    const reconciliations = Object.values(RECONCILIATIONS).flatMap((r) => [r.workflowType, r.formerWorkflowType]);
    for (const t of ['issueCard', 'fundCard', 'withdrawFromCard', 'cardLifecycle', 'providerEntity', 'onboardCardholder', 'purchaseEsim', 'rechargeEsim', 'trackPayout', 'sendPayout', ...reconciliations]) {
      expect(types).toContain(t);
    }
  });

  test('every history replays without nondeterminism', async () => {
    const histories = files.map((f) => ({ workflowId: relative(ROOT, f), history: loadHistory(f) }));
    const results = Worker.runReplayHistories(
      {
        workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
        dataConverter: createDataConverter(loadConfig(REPLAY_CODEC_ENV).codec),
      },
      histories,
    );
    const failures: string[] = [];
    for await (const result of results) if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    expect(failures).toEqual([]);
    expect(histories.length).toBeGreaterThanOrEqual(14);
  }, 120_000);
});

/**
 * docs/versioning.md, "Activities across builds": a pinned flow's activities run on its own build's
 * workers, but an auto-upgrading flow may have scheduled an activity on the build before this one
 * that this build's workers then run. So no activity type any kept history scheduled is ever
 * removed or renamed while a flow of that era may be running.
 */
test('every activity type a kept history scheduled is still registered', () => {
  const registered = new Set(Object.keys(createActivities({ provider: {} as never, bins: {} as never, temporal: {} as never, pins: {} as never, documents: {} as never, reconcileBudget: { windowMs: 60_000, share: 0.1 } })));
  const scheduled = new Set(
    files.flatMap((f) => (JSON.parse(readFileSync(f, 'utf8')) as { events: Array<{ activityTaskScheduledEventAttributes?: { activityType?: { name?: string } } }> }).events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)),
  );
  scheduled.delete(undefined);
  expect(scheduled.size).toBeGreaterThanOrEqual(10);
  expect([...scheduled].filter((name) => !registered.has(name!))).toEqual([]);
});

function workflowType(file: string): string | undefined {
  const history = JSON.parse(readFileSync(file, 'utf8')) as { events: Array<{ workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }> };
  return history.events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
}
