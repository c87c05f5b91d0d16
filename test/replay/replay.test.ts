/**
 * Replays the recorded histories (test/replay/histories/**) against the current workflow code, as
 * release 2 runs them (docs/versioning.md, "Release 2"): current/ holds release 2's recordings;
 * every other folder release 1's. Release 2 replays every history of an auto-upgrading type,
 * whichever release recorded it, and the pinned flows' histories it recorded itself. Release 1's
 * histories of pinned types (release-1-last/ the last it recorded) are kept as the record of what
 * release 2 refuses to run: those flows end on release 1's build, and the release gate keeps
 * unversioned ones from release 2. A change to src/workflows/** that breaks determinism for a
 * workflow that may be running fails here: ship it behind a patch marker instead. The histories in
 * before-versioned-keys/ (before the idempotency-key patches) and before-one-way-waiting/ (flows
 * that polled by themselves), before-money-edges/, before-coalesced-reads/, before-reconcile-updates/
 * (card workflows before MoneyMovedHour, and no reconciliation histories yet), before-one-marker/ (standalone
 * money flows with three markers and the workflow's signal to the card), before-schedule-names/
 * (the reconciliation workflows under their former camelCase types), before-documents-store/
 * (an onboarding whose documents were paths), before-open-items/ (a fundCard and a card update
 * that ended OutcomeUnknown without opening an item), before-balance-read-after-answer/ (card
 * workflows whose money updates waited for the card's read) and before-caller-fields/ (a payout and a
 * hosted onboarding that sent an `extra` field and a redirectUrl now refused) stand for workflows
 * still running and must keep replaying, where their type auto-upgrades.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { nexusBundlePathOf } from '../../src/fleet/nexus-bundle';
import { loadConfig } from '../../src/config';
import { RECONCILIATIONS } from '../../src/shared/reconciliation';
import { PINNED_FLOWS } from '../../src/shared/pinned-flows';
import { createDataConverter } from '../../src/codec/payload-codec';
import { REPLAY_CODEC_ENV } from './codec';
import { createActivities } from '../../src/activities';
import { createRelayActivities } from '../../src/nexus/relay-activities';
import { loadHistory } from './load-history';

const ROOT = join(__dirname, 'histories');

function historyFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? historyFiles(path) : name.endsWith('.json') ? [path] : [];
  });
}

const files = historyFiles(ROOT);
const PINNED: ReadonlySet<string> = new Set(PINNED_FLOWS);
const recordedByRelease2 = (file: string) => relative(ROOT, file).startsWith('current/');
/** What release 2 runs: every auto-upgrading history, and the pinned ones it recorded. */
const release2Runs = (file: string) => recordedByRelease2(file) || !PINNED.has(workflowType(file) ?? '');

/** The Nexus worker's relay runs from its own bundle with the SDK's default converter (src/fleet/nexus-bundle.ts); every other type from ours. */
const NEXUS_TYPES: ReadonlySet<string> = new Set(['onboardingRelay']);

async function replayFailures(paths: string[]): Promise<string[]> {
  const ours = paths.filter((f) => !NEXUS_TYPES.has(workflowType(f) ?? ''));
  const nexus = paths.filter((f) => NEXUS_TYPES.has(workflowType(f) ?? ''));
  return [
    ...(await replayed(ours, { workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! }, dataConverter: createDataConverter(loadConfig(REPLAY_CODEC_ENV).codec) })),
    ...(await replayed(nexus, { workflowBundle: { codePath: nexusBundlePathOf(process.env.TEST_WORKFLOW_BUNDLE!) } })),
  ];
}

async function replayed(paths: string[], options: ReplayWorkerOptions): Promise<string[]> {
  if (paths.length === 0) return [];
  const histories = paths.map((f) => ({ workflowId: relative(ROOT, f), history: loadHistory(f) }));
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories(options, histories)) if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  return failures;
}


describe('replay of recorded histories', () => {
  beforeAll(() => {
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      // installed by an earlier test file in this process
    }
  });

  test('covers every workflow type, each among the histories release 2 runs', () => {
    const types = new Set(files.filter(release2Runs).map((f) => workflowType(f)));
    const reconciliations = Object.values(RECONCILIATIONS).flatMap((r) => [r.workflowType, r.formerWorkflowType]);
    for (const t of ['issueCard', 'fundCard', 'withdrawFromCard', 'cardLifecycle', 'providerEntity', 'onboardCardholder', 'onboardingRelay', 'purchaseEsim', 'rechargeEsim', 'trackPayout', 'sendPayout', ...reconciliations]) {
      expect(types).toContain(t);
    }
  });

  test('every history release 2 runs replays without nondeterminism', async () => {
    const runs = files.filter(release2Runs);
    expect(await replayFailures(runs)).toEqual([]);
    expect(runs.length).toBeGreaterThanOrEqual(14);
  }, 120_000);

  test("release 1's pinned histories are release 1's only: no marker in release 2's, and those that took a dropped branch fail on release 2", async () => {
    const release1Pinned = files.filter((f) => !release2Runs(f));
    expect(release1Pinned.length).toBeGreaterThanOrEqual(20);
    // Release 2's pinned flows record no marker at all (lib/versioning.ts changeApplies).
    const markers = files.filter((f) => recordedByRelease2(f) && PINNED.has(workflowType(f) ?? '')).filter((f) => patchMarkers(f) > 0);
    expect(markers.map((f) => relative(ROOT, f))).toEqual([]);
    // The three-marker money flows signalled the card from the workflow: release 2 issues no such command.
    const failing = (await replayFailures(release1Pinned)).map((f) => f.split(':')[0]);
    expect(failing).toEqual(expect.arrayContaining(['before-one-marker/fund-card.json', 'before-one-marker/withdraw-from-card.json']));
  }, 120_000);
});

/**
 * docs/versioning.md, "Activities across builds": a pinned flow's activities run on its own build's
 * workers, but an auto-upgrading flow may have scheduled an activity on the build before this one
 * that this build's workers then run. So no activity type any kept history scheduled is ever
 * removed or renamed while a flow of that era may be running.
 */
test('every activity type a kept history scheduled is still registered', () => {
  // The main workers' activities, and the Nexus service's worker's (the onboarding relay's).
  const registered = new Set([
    ...Object.keys(createActivities({ provider: {} as never, bins: {} as never, temporal: {} as never, pins: {} as never, cardActions: {} as never, documents: {} as never, reconcileBudget: { windowMs: 60_000, share: 0.1 }, openItemMinAskMs: 60_000 })),
    ...Object.keys(createRelayActivities({} as never, {} as never)),
  ]);
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

function patchMarkers(file: string): number {
  const history = JSON.parse(readFileSync(file, 'utf8')) as { events: Array<{ markerRecordedEventAttributes?: { markerName?: string } }> };
  return history.events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch').length;
}
