/**
 * The workers of one process: the main task queue (workflows, and activities that only talk
 * to Temporal), the entity queue (entity workflows, few of them cached: they mostly wait) and
 * one rate-limited queue per hot endpoint or rate class, each with a
 * server-side activity rate so that every worker of the fleet together stays under the
 * provider's limits (docs/rate-budget.md). Activities are built once, here, from their dependencies.
 */
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { status } from '@grpc/grpc-js';
import { describeGate, releaseGate, type ReleaseGate } from '../temporal/release-gate';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { assertPinKeys, type Config } from '../config';
import { createActivities } from '../activities';
import { DocumentStore } from '../documents/store';
import { workerDataConverter } from '../codec/payload-codec';
import { PinOpener } from '../codec/card-secrets';
import { CardActionVerifier } from '../codec/card-capability';
import { BinCache } from '../provider/bin-cache';
import { createProviderClient } from '../provider/client';
import type { ProviderCallObserver } from '../provider/transport';
import type { ReconciliationMetrics } from '../observability/metrics';
import type { CardBinAnswer } from '../provider/answers';
import { fleetRate } from '../provider/rate-budget';
import { bundleHasTracing, type Tracing } from '../observability/tracing';
import { RATE_QUEUES, RATE_QUEUE_LIMITS, entityQueue, nexusCallerQueue, rateClassQueue, type RateQueue } from '../shared/task-queues';
import { CardIssuingClient } from '../client';
import { cardIssuingHandler } from '../nexus/handler';
import { createRelayActivities } from '../nexus/relay-activities';
import type { NexusCaller } from '../nexus/callers';
import { nexusWorkflows } from './nexus-bundle';
import { clientConnectionOptions, connectionOptions } from '../temporal/connection';
import { SEARCH_ATTRIBUTES } from '../shared/search-attributes';
import { bootstrapCurrentBuild, recordRelease } from '../temporal/deployments';

/**
 * Modules evaluated once into the shared V8 context instead of again in every workflow's own
 * module cache (docs/performance.md, P4): the whole workflow module graph. The SDK freezes what
 * it shares, which our workflow code allows: its modules hold constants, classes and functions,
 * and no state that a workflow changes (every workflow test runs on a bundle that preloads them).
 * Every workflow reaches its own execution through the SDK's per-workflow globals at call time.
 */
export const WORKFLOW_PRELOAD_MODULES: readonly string[] = [require.resolve('../workflows')];

export interface WorkerSetup {
  config: Config;
  /** Defaults to config.temporal.taskQueue; tests use one per test. */
  taskQueue?: string;
  /** A prebuilt bundle (tests build one per run); otherwise the worker bundles src/workflows. */
  workflowBundlePath?: string;
  /**
   * Whether this process sets the rate-limited queues' fleet-wide rate (default true): as a
   * queue-level limit through the API, which no worker's own setting overrides, and as the
   * worker's maxTaskQueueActivitiesPerSecond for servers without that API. False sets
   * nothing, and so lifts nothing that another process set (tests on a queue of their own).
   */
  enforceRateBudget?: boolean;
  /** The main worker's workflow cache size (the SDK's default otherwise). */
  maxCachedWorkflows?: number;
  /** The entity worker's workflow cache size (default config.entityWorkflowCacheSize). */
  maxCachedEntityWorkflows?: number;
  /** Modules preloaded into the shared workflow context when bundling here (default WORKFLOW_PRELOAD_MODULES). */
  preloadModules?: readonly string[];
  /** Told of every provider call's outcome (metrics). */
  providerObserver?: ProviderCallObserver;
  /** Told what each reconciliation run found (metrics). */
  reconciliationMetrics?: ReconciliationMetrics;
  /** This process's tracing (observability/tracing.ts); unset: no interceptors, no OpenTelemetry in the bundle. */
  tracing?: Tracing;
}

export interface WorkerFleet {
  workers: Worker[];
  run(): Promise<void>;
  shutdown(): void;
}

export async function createWorkers(setup: WorkerSetup): Promise<WorkerFleet> {
  const { config, tracing } = setup;
  if (setup.workflowBundlePath) assertBundleMatchesTracing(setup.workflowBundlePath, tracing !== undefined);
  const taskQueue = setup.taskQueue ?? config.temporal.taskQueue;
  const native = await NativeConnection.connect(connectionOptions(config.temporal));
  const connection = await Connection.connect(clientConnectionOptions(config.temporal));
  await assertSearchAttributes(connection, config.temporal.namespace)
    .then(() => (config.temporal.deployment ? assertReleaseGate(new Client({ connection, namespace: config.temporal.namespace }), taskQueue) : undefined))
    .catch(async (err: unknown) => {
      await Promise.allSettled([connection.close(), native.close()]);
      throw err;
    });
  const dataConverter = workerDataConverter(config);
  const provider = createProviderClient(config.provider, { observer: setup.providerObserver });
  const temporalClient = new Client({ connection, namespace: config.temporal.namespace, dataConverter, interceptors: tracing?.clientInterceptors() });
  const activities = createActivities({
    provider,
    bins: new BinCache<CardBinAnswer>(provider),
    temporal: temporalClient,
    pins: new PinOpener(assertPinKeys(config)),
    cardActions: new CardActionVerifier(config.cardActions.trustedKeys),
    documents: new DocumentStore(config.documentsDir),
    reconciliationMetrics: setup.reconciliationMetrics,
    reconcileBudget: { windowMs: config.provider.rateWindowMs, share: config.provider.reconcileBudgetShare },
    openItemMinAskMs: config.provider.openItemMinAskMs,
    deploymentName: config.temporal.deployment?.name,
  });
  const connected: Partial<WorkerOptions> = {
    connection: native,
    namespace: config.temporal.namespace,
    dataConverter,
    interceptors: tracing?.workerInterceptors(false),
    ...versioningOptions(config.temporal.deployment),
  };
  const common: Partial<WorkerOptions> = { ...connected, activities };
  const workflows: Partial<WorkerOptions> = {
    ...(setup.workflowBundlePath
      ? { workflowBundle: { codePath: setup.workflowBundlePath } }
      : { workflowsPath: require.resolve('../workflows'), bundlerOptions: { preloadModules: [...(setup.preloadModules ?? WORKFLOW_PRELOAD_MODULES)] } }),
    // A prebuilt bundle carries the workflow interceptors already (checked above); bundled here, they are added.
    ...(tracing ? { interceptors: tracing.workerInterceptors(!setup.workflowBundlePath), sinks: tracing.workerSinks() } : {}),
  };

  const enforce = setup.enforceRateBudget !== false;
  const rates = RATE_QUEUES.map((queue) => ({
    taskQueue: rateClassQueue(taskQueue, queue),
    perSecond: queueRate(queue, config.provider),
  }));
  if (enforce) await setQueueRateLimits(connection, config.temporal.namespace, rates);
  // One Nexus worker per caller (NEXUS_CALLERS), sharing the relay's bundle; none configured: none runs.
  const callers = config.nexus.callers;
  const nexusCommon = callers.length > 0 ? { connection: native, namespace: config.temporal.namespace, ...(await nexusWorkflows(setup.workflowBundlePath)) } : undefined;
  const workers = await Promise.all([
    Worker.create({ ...common, ...workflows, taskQueue, maxCachedWorkflows: setup.maxCachedWorkflows }),
    // Workflows only: an entity's provider calls run on the rate queues of the main queue.
    Worker.create({ ...connected, ...workflows, taskQueue: entityQueue(taskQueue), maxCachedWorkflows: setup.maxCachedEntityWorkflows ?? config.entityWorkflowCacheSize }),
    ...rates.map((rate) =>
      Worker.create({ ...common, taskQueue: rate.taskQueue, maxTaskQueueActivitiesPerSecond: enforce ? rate.perSecond : undefined }),
    ),
    ...callers.map((caller) => nexusWorker(nexusCommon!, config, taskQueue, temporalClient, caller)),
  ]);
  return {
    workers,
    run: async () => {
      const bootstrap = new AbortController();
      try {
        const running = runTogether(workers);
        bootstrapDeployment(connection, config, bootstrap.signal);
        await running;
      } finally {
        bootstrap.abort();
        await provider.close();
        await connection.close();
        await native.close();
      }
    },
    shutdown: () => workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown()),
  };
}

/**
 * The Nexus service `cardIssuing` (src/nexus, docs/nexus.md) for one caller, on that caller's queue
 * (`<queue>-nexus-<name>`), its endpoint's target: the handler knows whom it serves (its allow-list,
 * limits, keys and what it owns: nexus/callers.ts). Its payloads are the caller's: read and written as plain JSON by the SDK's default
 * converter, since no caller holds our payload key, and so are the onboarding relays it runs (their
 * result is the caller's operation result; workflows/onboarding-relay.ts), the only workflow it runs
 * (nexus-bundle.ts). The flows it starts go through our client with our codec, so our histories stay
 * encrypted. Unversioned: the relay keeps the marker discipline of an auto-upgrading flow. No
 * workflow tracing: the relay's activities are traced, its workflow task is not.
 */
function nexusWorker(common: Partial<WorkerOptions>, config: Config, taskQueue: string, temporal: Client, caller: NexusCaller): Promise<Worker> {
  const client = new CardIssuingClient({ client: temporal, taskQueue, codec: config.codec });
  return Worker.create({
    ...common,
    taskQueue: nexusCallerQueue(taskQueue, caller.name),
    nexusServices: [cardIssuingHandler(client, config.codec, caller)],
    activities: createRelayActivities(client, config.codec, caller),
  });
}

/**
 * Every worker of the process declares the same deployment version (docs/versioning.md): the
 * workflows' own declarations (declareVersioning beside each, workflows/lib/versioning.ts) say which are pinned to it; a type
 * that declares none auto-upgrades, the behaviour that keeps the classic marker discipline.
 */
function versioningOptions(deployment: Config['temporal']['deployment']): Partial<WorkerOptions> {
  if (!deployment) return {};
  return { workerDeploymentOptions: { useWorkerVersioning: true, version: { deploymentName: deployment.name, buildId: deployment.buildId }, defaultVersioningBehavior: 'AUTO_UPGRADE' } };
}

/**
 * The version records its release (deployments.ts recordRelease: no pinned flow of it is moved to an
 * earlier release's build); the first deploy of a deployment makes its build current; later ones are the operator's.
 */
function bootstrapDeployment(connection: Connection, config: Config, signal: AbortSignal): void {
  const deployment = config.temporal.deployment;
  if (!deployment) return;
  const target = { connection, namespace: config.temporal.namespace, deploymentName: deployment.name, identity: `worker-bootstrap@${process.pid}` };
  recordRelease(target, deployment.buildId, signal).catch(
    (err: unknown) => !signal.aborted && process.stderr.write(`worker: could not record build ${deployment.buildId}'s release in its version's metadata (${(err as Error).message}): its pinned flows count as release 1's\n`),
  );
  if (deployment.bootstrap !== 'if-none') return;
  bootstrapCurrentBuild(target, deployment.buildId, signal).then(
    (outcome) => outcome === 'set' && process.stderr.write(`worker: deployment ${deployment.name} had no current version: build ${deployment.buildId} is now current\n`),
    (err: unknown) => !signal.aborted && process.stderr.write(`worker: could not bootstrap deployment ${deployment.name} (${(err as Error).message}); set its current version with \`starter deploy promote --build ${deployment.buildId}\`\n`),
  );
}

type RunnableWorker = Pick<Worker, 'run' | 'shutdown' | 'getState'>;

/**
 * Runs the workers of one process until all have stopped. When one fails, the others are shut
 * down (they drain) before this rejects with the first failure: the connections are closed only
 * after every worker stopped, never under an activity still using the client (which would meet
 * grpc-js "Channel has been shut down") or a worker still holding the native connection.
 */
export async function runTogether(workers: RunnableWorker[]): Promise<void> {
  const shutdownRunning = () => workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
  const results = await Promise.allSettled(
    workers.map((w) =>
      w.run().catch((err: unknown) => {
        shutdownRunning();
        throw err;
      }),
    ),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** The fleet-wide activity rate of a rate-limited queue: its endpoints' whole window (docs/rate-budget.md). */
export function queueRate(queue: RateQueue, provider: Pick<Config['provider'], 'rateWindowMs'>): number {
  return fleetRate(RATE_QUEUE_LIMITS[queue], provider.rateWindowMs);
}

/**
 * A prebuilt bundle holds the workflow interceptors or not (bundle.ts --tracing): one without
 * them would drop workflow spans silently, one with them would carry OpenTelemetry into every
 * workflow context and call a sink nobody injected. Either mismatch stops the worker at start.
 */
function assertBundleMatchesTracing(bundlePath: string, tracing: boolean): void {
  if (bundleHasTracing(readFileSync(bundlePath, 'utf8')) === tracing) return;
  throw new Error(
    tracing
      ? `${bundlePath} was built without tracing but OTEL_EXPORTER_OTLP_ENDPOINT is set: build it with \`bundle --tracing\` (dist/workflow-bundle-traced.js in the image)`
      : `${bundlePath} was built with tracing but OTEL_EXPORTER_OTLP_ENDPOINT is not set: use a bundle built without --tracing`,
  );
}

/**
 * Refuses to start when the namespace lacks one of our search attributes: a workflow that sets an
 * attribute the namespace does not have fails its task until somebody registers it (a card's money
 * update stuck). A server that cannot list them (no operator API) is let through with a warning.
 */
async function assertSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  let registered: string[];
  try {
    registered = Object.keys((await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {});
  } catch (err) {
    process.stderr.write(`worker: could not list the search attributes of ${namespace} (${(err as Error).message}); not checked\n`);
    return;
  }
  const missing = Object.keys(SEARCH_ATTRIBUTES).filter((name) => !registered.includes(name));
  if (missing.length > 0) {
    const create = missing.map((name) => `--name ${name} --type ${SEARCH_ATTRIBUTES[name as keyof typeof SEARCH_ATTRIBUTES]}`).join(' ');
    throw new Error(`namespace ${namespace} lacks the search attribute(s) ${missing.join(', ')}: register them first (temporal operator search-attribute create --namespace ${namespace} ${create})`);
  }
}

/**
 * A versioned worker of this release refuses to start while a short flow that ran on an unversioned
 * worker is open (temporal/release-gate.ts): it would be routed here and fail to replay. Unversioned
 * workers (development, tests) run every open flow whatever build started it, their own included,
 * so the gate cannot tell theirs apart: there, `deploy release-gate` before the upgrade is the check.
 */
async function assertReleaseGate(client: Client, taskQueue: string): Promise<void> {
  let gate: ReleaseGate;
  try {
    gate = await releaseGate(client, { taskQueue });
  } catch (err) {
    // A server without visibility queries (Temporal's Java test server) cannot be asked: said, and let through, as earlier-runs.ts does.
    // Any other failure refuses the start: a worker that cannot tell must not run what it may not replay.
    if ((err as { code?: number }).code !== status.UNIMPLEMENTED && (err as { cause?: { code?: number } }).cause?.code !== status.UNIMPLEMENTED) throw err;
    process.stderr.write(`worker: visibility queries unsupported by this Temporal server; release gate not checked\n`);
    return;
  }
  if (!gate.passes) throw new Error(describeGate(gate));
}

/**
 * Sets each queue's activity rate at the queue level (UpdateTaskQueueConfig): it overrides what
 * any worker sets, so a worker started without the limit cannot lift it for the fleet. A server
 * without the API keeps the workers' own setting, where the last poller's value wins.
 */
async function setQueueRateLimits(connection: Connection, namespace: string, rates: Array<{ taskQueue: string; perSecond: number }>): Promise<void> {
  for (const { taskQueue, perSecond } of rates) {
    try {
      await connection.workflowService.updateTaskQueueConfig({
        namespace,
        identity: `rate-budget@${process.pid}`,
        taskQueue,
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        updateQueueRateLimit: { rateLimit: { requestsPerSecond: perSecond }, reason: 'provider rate budget (docs/rate-budget.md)' },
      });
    } catch (err) {
      process.stderr.write(`worker: no queue-level rate limit on ${taskQueue} (${(err as Error).message}); relying on the workers' own setting\n`);
      return;
    }
  }
}
