/**
 * A flow that ends OutcomeUnknown stays in sight until it is settled (issue 29): it marks itself
 * ProviderStatus = OUTCOME_UNKNOWN as it fails, and the worker's /metrics counts it in
 * outcome_unknown_unsettled under its workflow type (the alert OutcomeUnknownUnsettled reads it),
 * until a settleOutcome run under settlement/<workflowId> completes. A flow that fails for another reason is not marked. The marker (outcome-unknown-searchable)
 * keeps the histories of flows that failed so before it replaying.
 */
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createDataConverter } from '../../src/codec/payload-codec';
import { freePort } from '../../src/ports';
import { PROVIDER_STATUS } from '../../src/shared/search-attributes';
import { OUTCOME_UNKNOWN_STATUS, settlementWorkflowId } from '../../src/shared/settlement';
import { OUTCOME_UNKNOWN_SEARCHABLE_PATCH } from '../../src/workflows/lib/outcome-unknown';
import type { AppProcess } from '../../tools/processes';
import { issueTestCard, workflowFailure } from '../helpers/flows';
import { startStack, uniqueId, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';
import { spawnWorker } from '../helpers/worker-process';
import { TIMINGS, faults } from '../money-edges/helpers';

type History = temporal.api.history.v1.IHistory;
const EventType = temporal.api.enums.v1.EventType;

describe('a flow that ended OutcomeUnknown', () => {
  let stack: Stack | undefined;
  let worker: AppProcess | undefined;
  afterEach(async () => {
    await worker?.stop();
    await stack?.close();
  });

  test('fundCard whose answer was cut off and whose operation cannot be read: marked OUTCOME_UNKNOWN, counted unsettled on /metrics until settled; a ValidationFailed is not', async () => {
    stack = await startStack({ profile: 'minimal', cardProvisioningMs: 50 });
    const card = await issueTestCard(stack, 1000);
    // The flows run on a worker process of their own, which serves /metrics.
    await stack.stopWorkers();
    const metricsPort = await freePort();
    worker = spawnWorker(stack, { METRICS_PORT: String(metricsPort), WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE! });
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    await waitUntil(() => fetch(`${metricsUrl}/ready`).then((r) => r.ok), 90_000, 'the worker ready');
    const run = (workflowId: string, input: Record<string, unknown>) =>
      stack!.client.workflow.execute('fundCard', { taskQueue: stack!.taskQueue, workflowId, args: [{ timings: TIMINGS, ...input }] });
    const providerStatus = async (workflowId: string) => (await stack!.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes.get(PROVIDER_STATUS);

    // The funding takes effect but its answer is cut off; the operation's record is refused (403).
    await faults(stack, {
      'POST /cards/{cardId}/funding': { truncateRate: 1, maxFaults: 1 },
      'GET /operations/{idempotencyKey}': { refuseRate: 1, refuseStatus: 403 },
    });
    const unknownId = uniqueId('fund-unknown');
    const unknown = await workflowFailure(run(unknownId, { cardId: card.cardId, amount: 2500 }));
    expect(unknown.type).toBe('OutcomeUnknown');
    expect(await providerStatus(unknownId)).toBe(OUTCOME_UNKNOWN_STATUS);

    const invalidId = uniqueId('fund-invalid');
    expect((await workflowFailure(run(invalidId, { cardId: card.cardId, amount: -1 }))).type).toBe('ValidationFailed');
    expect(await providerStatus(invalidId)).toBeUndefined();

    // Visibility catches up; the gauge reads it at most every 10 s.
    const gauge = async () => {
      const text = await (await fetch(`${metricsUrl}/metrics`)).text();
      return Object.fromEntries([...text.matchAll(/^outcome_unknown_unsettled\{flow_kind="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
    };
    await waitUntil(async () => (await gauge()).fundCard === 1, 60_000, 'outcome_unknown_unsettled{flow_kind="fundCard"} 1');
    expect(await gauge()).toMatchObject({ fundCard: 1, withdrawFromCard: 0, sendPayout: 0 });

    // Settled as the convention says (`starter settle` does it): a completed settleOutcome under settlement/<workflowId>.
    await faults(stack, {});
    const settlement = await stack.client.workflow.execute('settleOutcome', { taskQueue: stack.taskQueue, workflowId: settlementWorkflowId(unknownId), args: [{ workflowId: unknownId }] });
    expect(settlement).toMatchObject({ workflowId: unknownId, verdict: 'moved' });
    await waitUntil(async () => (await gauge()).fundCard === 0, 60_000, 'outcome_unknown_unsettled{flow_kind="fundCard"} 0 once settled');

    // Its history replays, and so does the one it would have had before the marker (no marker, no upserts).
    const history = await stack.client.workflow.getHandle(unknownId).fetchHistory();
    const before = withoutMarker(history, OUTCOME_UNKNOWN_SEARCHABLE_PATCH);
    expect(before.events!.length).toBe(history.events!.length - 3);
    const replay = (h: History) => Worker.runReplayHistory({ workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! }, dataConverter: createDataConverter(stack!.config.codec) }, h, unknownId);
    await replay(history);
    await replay(before);
  }, 240_000);
});

/**
 * `history` as a worker without the patch would have written it: without its marker and the upserts
 * after it in the same workflow task (the server's TemporalChangeVersion, then ProviderStatus), renumbered.
 */
function withoutMarker(history: History, patchId: string): History {
  const events = history.events ?? [];
  const marker = events.findIndex(
    (e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED && Object.values(e.markerRecordedEventAttributes?.details ?? {}).some((p) => p.payloads?.some((x) => Buffer.from(x.data ?? []).toString().includes(patchId))),
  );
  if (marker < 0) throw new Error(`no ${patchId} marker in the history`);
  const task = String(events[marker].markerRecordedEventAttributes?.workflowTaskCompletedEventId);
  const upserts = (e: temporal.api.history.v1.IHistoryEvent) =>
    e.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES && String(e.upsertWorkflowSearchAttributesEventAttributes?.workflowTaskCompletedEventId) === task;
  const kept = events.filter((e, i) => i !== marker && !(i > marker && upserts(e)));
  // protobufjs encodes a number where an int64 (Long) is declared.
  return { ...history, events: kept.map((e, i) => ({ ...e, eventId: i + 1 })) as unknown as temporal.api.history.v1.IHistoryEvent[] };
}
