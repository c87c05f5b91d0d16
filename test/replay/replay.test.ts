/**
 * Replays the recorded histories (test/replay/histories/**) against the current workflow code, as
 * release 4 runs them (docs/versioning.md, "Releases 3 and 4"). Every workflow type is pinned: a
 * build replays only the histories its own runs recorded, and a run reaches a new build only by a
 * continue-as-new, which starts a fresh history. So current/ holds release 4's recordings (`npm run
 * record-histories`), which must replay without nondeterminism and hold no patch marker: a change to
 * src/workflows/** needs no marker, only new recordings when it changes what a run records.
 *
 * before-release-4/ keeps a few histories of earlier releases that took markers (a card workflow,
 * an onboarding, a payout, a reconciliation run): the record of what release 4 cannot replay, and
 * so of why a build of it takes flows only through the marker gate (temporal/marker-gate.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { nexusBundlePathOf } from '../../src/fleet/nexus-bundle';
import { loadConfig } from '../../src/config';
import { RECONCILIATIONS } from '../../src/shared/reconciliation';
import { workerDataConverter } from '../../src/codec/payload-codec';
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
const recordedByRelease4 = (file: string) => relative(ROOT, file).startsWith('current/');

/** The Nexus worker's relay runs from its own bundle with the SDK's default converter (src/fleet/nexus-bundle.ts); every other type from ours. */
const NEXUS_TYPES: ReadonlySet<string> = new Set(['onboardingRelay']);

async function replayFailures(paths: string[]): Promise<string[]> {
  const ours = paths.filter((f) => !NEXUS_TYPES.has(workflowType(f) ?? ''));
  const nexus = paths.filter((f) => NEXUS_TYPES.has(workflowType(f) ?? ''));
  return [
    ...(await replayed(ours, { workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! }, dataConverter: workerDataConverter(loadConfig(REPLAY_CODEC_ENV)) })),
    ...(await replayed(nexus, { workflowBundle: { codePath: nexusBundlePathOf(process.env.TEST_WORKFLOW_BUNDLE!) } })),
  ];
}

/**
 * Each history replayed under the workflow ID it ran under (recorded beside its events): the workflow
 * takes only signals addressed to it (lib/trusted-signal.ts), as the live run did. Failures are named
 * by file.
 */
async function replayed(paths: string[], options: ReplayWorkerOptions): Promise<string[]> {
  if (paths.length === 0) return [];
  const histories = paths.map((f) => ({ workflowId: recordedWorkflowId(f) ?? relative(ROOT, f), history: loadHistory(f) }));
  const failures: string[] = [];
  let i = 0;
  for await (const result of Worker.runReplayHistories(options, histories)) {
    if (result.error) failures.push(`${relative(ROOT, paths[i])}: ${result.error.message}`);
    i++;
  }
  return failures;
}

function recordedWorkflowId(file: string): string | undefined {
  return (JSON.parse(readFileSync(file, 'utf8')) as { workflowId?: string }).workflowId;
}


describe('replay of recorded histories', () => {
  beforeAll(() => {
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      // installed by an earlier test file in this process
    }
  });

  test("covers every workflow type among release 4's recordings", () => {
    const types = new Set(files.filter(recordedByRelease4).map((f) => workflowType(f)));
    const reconciliations = Object.values(RECONCILIATIONS).map((r) => r.workflowType);
    for (const t of ['issueCard', 'fundCard', 'withdrawFromCard', 'cardLifecycle', 'providerEntity', 'openItem', 'onboardCardholder', 'onboardingRelay', 'purchaseEsim', 'rechargeEsim', 'trackPayout', 'sendPayout', ...reconciliations]) {
      expect(types).toContain(t);
    }
  });

  test('every history release 4 recorded replays without nondeterminism, and none holds a patch marker', async () => {
    const runs = files.filter(recordedByRelease4);
    expect(runs.length).toBeGreaterThanOrEqual(20);
    expect(runs.filter((f) => patchMarkers(f) > 0).map((f) => relative(ROOT, f))).toEqual([]);
    expect(await replayFailures(runs)).toEqual([]);
  }, 120_000);

  test('histories of earlier releases that took a marker fail on release 4: a build of it must never be handed one (the marker gate)', async () => {
    const earlier = files.filter((f) => !recordedByRelease4(f));
    expect(earlier.length).toBeGreaterThanOrEqual(4);
    expect(earlier.filter((f) => patchMarkers(f) === 0).map((f) => relative(ROOT, f))).toEqual([]);
    const failing = (await replayFailures(earlier)).map((f) => f.split(':')[0]);
    expect(failing.sort()).toEqual(earlier.map((f) => relative(ROOT, f)).sort());
  }, 120_000);
});

/**
 * docs/versioning.md, "Activities across builds": a pinned flow's activities run on its own build's
 * workers; the Nexus relay's workers are unversioned, and a run a promotion held on its build (a
 * pinned override) keeps scheduling there. So no activity type a kept history scheduled is removed
 * or renamed while a run of that era may be running.
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
