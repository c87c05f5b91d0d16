/**
 * Time skipping on Temporal's Java test server: the real issueCard workflow, the real workers
 * and the real provider sandbox, with a card that stays CREATING for hours of workflow time.
 * Every webhook is dropped, so the flow polls with its default (production) timings; the hours
 * of timers elapse in seconds. This file builds its own environment and bundle: it needs
 * neither the run's dev server nor its bundle (alone: SKIP_TEMPORAL=1 npx jest test/time-skipping.test.ts).
 * Java and Maven are optional for the project: on a machine without them these tests are skipped,
 * and the suite's name says what is missing.
 */
import { bundleNexusWorkflows, nexusBundlePathOf } from '../src/fleet/nexus-bundle';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { loadConfig, type Config } from '../src/config';
import { createDataConverter, BUNDLE_CONVERTERS } from '../src/codec/payload-codec';
import { CARD_ID, FLOW_KIND, PROVIDER_STATUS, SEARCH_ATTRIBUTES } from '../src/shared/search-attributes';
import { entityWorkflowId } from '../src/shared/ids';
import type { CardView } from '../src/shared/types';
import { ensureJavaTestServer, javaTestServerMissing } from '../tools/java-test-server';
import { startLocalStack, type LocalStack } from '../tools/local-stack';
import { fixtureBins } from './helpers/provider';
import { sandboxControl, type SandboxControl, type Stack } from './helpers/stack';
import { deliveries } from './helpers/wait';
import { newPinKeyPair } from '../src/codec/card-secrets';

const HOUR = 60 * 60 * 1000;
const SKIPPED = 6 * HOUR;

const missing = javaTestServerMissing();
if (missing) process.stderr.write(`time skipping: skipped, this machine lacks ${missing}\n`);

(missing ? describe.skip : describe)(`time skipping (Java test server)${missing ? `: SKIPPED, this machine lacks ${missing}` : ''}`, () => {
  let env: TestWorkflowEnvironment;
  let stack: LocalStack;
  let config: Config;
  let bundleDir: string;

  const control: SandboxControl = (method, path, body) => sandboxControl(stack.sandbox.url)(method, path, body);

  beforeAll(async () => {
    const wrapper = await ensureJavaTestServer();
    try {
      // The test server advertises no server version; core warns about it once per worker.
      Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
    } catch {
      // installed by an earlier test file in this process
    }
    const codecKey = randomBytes(32).toString('base64');
    const codec = loadConfig({ PAYLOAD_CODEC_KEY: codecKey, PAYLOAD_CODEC_KEY_ID: 'test' }).codec;
    // Settled, not Promise.all: a server that fails to start must not leave webpack bundling after the file is torn down
    // (CI: the bundle's late requires broke the next suites of the jest worker, "RawModule is not a constructor").
    const [started, bundle, nexusBundle] = await allOrFirstError([
      startTestServer(wrapper, codec),
      bundleWorkflowCode({ workflowsPath: require.resolve('../src/workflows'), ...BUNDLE_CONVERTERS, logger: quietLogger() }),
      bundleNexusWorkflows(),
    ] as const);
    env = started;
    bundleDir = mkdtempSync(join(tmpdir(), 'card-issuing-ts-'));
    writeFileSync(join(bundleDir, 'workflow-bundle.js'), bundle.code);
    writeFileSync(nexusBundlePathOf(join(bundleDir, 'workflow-bundle.js')), nexusBundle);

    // The dev server gets these as --search-attribute flags; the test server through the operator API
    // (unregistered, the first upsert fails every workflow task: "BadSearchAttributes: search attribute FlowKind is not defined").
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((name) => [name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
    });

    // The local stack's sandbox and workers, on the test server; no bridge, as every webhook is dropped.
    const base = loadConfig({
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace ?? 'default',
      TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
      PAYLOAD_CODEC_KEY: codecKey,
      PAYLOAD_CODEC_KEY_ID: 'test',
      PIN_SEAL_PRIVATE_KEY: newPinKeyPair().privateKey,
      PROVIDER_TIMEOUT_MS: '5000',
    });
    stack = await startLocalStack({ base, bridge: false, workers: { workflowBundlePath: join(bundleDir, 'workflow-bundle.js'), enforceRateBudget: false } });
    config = stack.config;
  });

  afterAll(async () => {
    await stack?.close();
    await env?.teardown();
    if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
  });

  test('issueCard waits out hours of provisioning with its default timings, in seconds of wall time', async () => {
    // The sandbox's longest provisioning (1 h) and no webhooks: only polling can see the card ENABLE.
    // The provider's rate limit counts real time, which does not skip: hours of polls come within
    // seconds, so the limit is lifted here (the budget itself is covered against the dev server).
    await control('PUT', '/config', { cardProvisioningMs: HOUR, webhook: { dropRate: 1 }, rateLimit: { general: 1_000_000 } });
    const { plain } = await fixtureBins({ config } as Stack);
    const wallStart = Date.now();
    const handle = await env.client.workflow.start('issueCard', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `issue-card-${randomUUID()}`,
      args: [{ cardBinId: plain.cardBinId, initialAmount: 1000, firstName: 'Rip', lastName: 'Van Winkle' }],
    });
    const cardId = await waitForCard();
    const virtualStart = await env.currentTimeMs();

    // Hours of workflow time: the webhook wait, then polls every 2 s, 4 s, ... up to every minute.
    await env.sleep(SKIPPED);
    expect(await env.currentTimeMs()).toBeGreaterThanOrEqual(virtualStart + SKIPPED);
    expect((await control<{ cards: unknown[] }>('GET', '/ledger')).cards).toHaveLength(1);
    await control('POST', `/cards/${cardId}/provisioning`, { status: 'ENABLE' });

    const card = await handle.result() as CardView;
    const wallMs = Date.now() - wallStart;
    expect(card).toMatchObject({ cardId, status: 'ENABLE', availableBalance: 1000 });

    // The flow waits; the card's own workflow waited for the webhook and then polled, on timers.
    let firedCount = 0;
    for (const workflowId of [handle.workflowId, entityWorkflowId('card', cardId)]) {
      const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      firedCount += events.filter((e) => e.timerFiredEventAttributes).length;
    }
    // The flow's own span of workflow time. (A sum of the fired timers' whole seconds fell short of it
    // by the poll timer still running at ENABLE and the dropped nanos: 21,571 s for 21,600 in one CI run.)
    const described = await handle.describe();
    const skippedMs = described.closeTime!.getTime() - described.startTime.getTime();
    const polls = (await control<{ endpoints: Record<string, { requests: number }> }>('GET', '/stats')).endpoints.getCard.requests;
    const dropped = (await deliveries(control)).filter((d) => d.eventType === 'CARD_CREATED').map((d) => d.status);
    process.stderr.write(`time skipping: ${firedCount} timers fired, ${Math.round(skippedMs / 60000)} min of workflow time, ${polls} polls, ${wallMs} ms of wall time\n`);

    expect(dropped).toEqual(['DROPPED']);
    // The custom search attributes, upserted by the workflow, were accepted once registered.
    const attrs = (await handle.describe()).typedSearchAttributes;
    expect([attrs.get(FLOW_KIND), attrs.get(CARD_ID), attrs.get(PROVIDER_STATUS)]).toEqual(['issueCard', cardId, 'ENABLE']);
    expect(skippedMs).toBeGreaterThanOrEqual(SKIPPED);
    expect(skippedMs).toBeGreaterThan(100 * wallMs);
    expect(polls).toBeGreaterThan(SKIPPED / (60 * 1000) - 10); // the interval caps at one minute

    async function waitForCard(): Promise<string> {
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
        const { cards } = await control<{ cards: Array<{ cardId: string }> }>('GET', '/ledger');
        if (cards.length > 0) return cards[0].cardId;
      }
      throw new Error('the workflow did not create a card within 30 s');
    }
  });
});

function quietLogger() {
  const noop = () => undefined;
  return { trace: noop, debug: noop, info: noop, warn: (m: string) => process.stderr.write(`${m}\n`), error: (m: string) => process.stderr.write(`${m}\n`), log: noop };
}

/**
 * The Java test server, asked twice: core waits a fixed 5 s for its JVM to listen, which a loaded
 * machine exceeded in CI ("ephemeral server … did not start within 5s"); a second start is the cure.
 */
async function startTestServer(wrapper: string, codec: ReturnType<typeof loadConfig>['codec']): Promise<TestWorkflowEnvironment> {
  const start = () => TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: wrapper } }, client: { dataConverter: createDataConverter(codec) } });
  return start().catch(start);
}

/** Every promise settled, then their values, or the first failure. */
async function allOrFirstError<T extends readonly unknown[]>(promises: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
