/**
 * Replays every recorded history (test/replay/histories/**) against the current workflow code.
 * A change to src/workflows/** that breaks determinism for a workflow that may be running fails
 * here: ship it behind a patch marker instead (docs/versioning.md). The histories in
 * before-versioned-keys/ (before the idempotency-key patches) and before-one-way-waiting/ (flows
 * that polled by themselves) stand for workflows still running and must keep replaying.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { createDataConverter } from '../../src/codec/payload-codec';
import { REPLAY_CODEC_ENV } from './codec';

const ROOT = join(__dirname, 'histories');

function historyFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? historyFiles(path) : name.endsWith('.json') ? [path] : [];
  });
}

const files = historyFiles(ROOT);

/**
 * The CLI's JSON history as a History message. SDK 1.24's own historyFromJSON fails here ("type
 * must be a Type"): @temporalio/common and @temporalio/proto each carry their own copy of
 * protobufjs. The JSON reader of the copy that defined the History type reads it.
 */
const load = createRequire(__filename);

function loadHistory(file: string): temporal.api.history.v1.History {
  const fromProto = { paths: [load.resolve('@temporalio/proto')] };
  const { fromJson } = load(load.resolve('protobufjs/ext/protojson', fromProto)) as { fromJson(type: unknown, json: unknown, options: unknown): temporal.api.history.v1.History };
  const { patchProtobufRoot } = load('@temporalio/proto/lib/patch-protobuf-root') as { patchProtobufRoot(root: unknown): { lookupType(name: string): unknown } };
  const historyType = patchProtobufRoot(load('@temporalio/proto')).lookupType('temporal.api.history.v1.History');
  return fromJson(historyType, JSON.parse(readFileSync(file, 'utf8')), { ignoreUnknownFields: true });
}

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
    for (const t of ['issueCard', 'fundCard', 'withdrawFromCard', 'cardLifecycle', 'providerEntity', 'onboardCardholder', 'purchaseEsim', 'rechargeEsim', 'trackPayout', 'sendPayout']) {
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

function workflowType(file: string): string | undefined {
  const history = JSON.parse(readFileSync(file, 'utf8')) as { events: Array<{ workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }> };
  return history.events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
}
