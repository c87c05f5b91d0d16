/**
 * A whole system per test on the run's real Temporal dev server: the provider sandbox over real
 * HTTP, the webhook bridge, and the workers on a task queue of the test's own.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { loadConfig, type Config } from '../../src/config';
import type { RunningBridge } from '../../src/bridge';
import { SandboxControlClient, type SandboxConfigPatch } from '../../src/sandbox/control-client';
import type { WorkerFleet } from '../../src/fleet/workers';
import { startLocalStack } from '../../tools/local-stack';
import { newPinKeyPair, sealPin } from '../../src/codec/card-secrets';
import type { SealedPin } from '../../src/shared/types';
import { CardActionSigner } from '../../src/codec/card-capability';
import type { CardAction, WithCapability } from '../../src/shared/card-capability';
import type { SignalDefinition } from '@temporalio/workflow';
import { addressed } from '../../src/shared/signal-origin';

export const TEST_CODEC_KEY = randomBytes(32).toString('base64');
/** The workers' PIN key pair (PIN_SEAL_PRIVATE_KEY): a pair of its own, as in production, where the worker refuses to start without it. */
export const TEST_PIN_KEYS = newPinKeyPair();

export interface Stack {
  config: Config;
  taskQueue: string;
  /** A service's client: the payload key, no signal MAC. */
  client: Client;
  /** The bridge's and the workers' client: payloads with the signal MAC, taken as the provider's word. */
  signaller: Client;
  sandboxUrl: string;
  bridge: RunningBridge;
  /** Calls the sandbox control API (CONTRACTS §5); resolves the JSON answer. */
  control: SandboxControl;
  startWorkers(): Promise<WorkerFleet>;
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

export function temporalAddress(): string {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEST_TEMPORAL_ADDRESS is not set: run through jest (test/global-setup.ts starts the server)');
  return address;
}

/** The local stack (tools/local-stack.ts) on the run's dev server, with workers on a task queue of the test's own. */
export async function startStack(sandboxConfig: SandboxConfigPatch = {}, env: Record<string, string> = {}): Promise<Stack> {
  const taskQueue = `test-${randomUUID()}`;
  const base = loadConfig({
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYLOAD_CODEC_KEY: TEST_CODEC_KEY,
    PAYLOAD_CODEC_KEY_ID: 'test',
    PIN_SEAL_PRIVATE_KEY: TEST_PIN_KEYS.privateKey,
    PIN_SEAL_KEY_ID: 'test',
    PROVIDER_TIMEOUT_MS: '5000',
    // Tests' items ask at their flows' fast pace; production keeps the floor of a minute.
    OPEN_ITEM_MIN_ASK_MS: '1000',
    ...env,
  });
  const stack = await startLocalStack({ base, sandboxConfig, workers: { workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE, enforceRateBudget: false } });
  return {
    config: stack.config,
    taskQueue,
    client: stack.client,
    signaller: stack.signaller,
    sandboxUrl: stack.sandbox.url,
    bridge: stack.bridge!,
    control: sandboxControl(stack.sandbox.url),
    startWorkers: stack.startWorkers,
    stopWorkers: stack.stopWorkers,
    close: stack.close,
  };
}

/** Fast waits for tests: webhooks get a short window before the flow falls back to polling. */
export const FAST_TIMINGS = { webhookWaitMs: 3000, pollInitialIntervalMs: 200, pollMaxIntervalMs: 1000, deadlineMs: 60000 };

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

export type SandboxControl = <T = any>(method: string, path: string, body?: unknown) => Promise<T>;

/** Calls the sandbox control API (CONTRACTS §5) at `sandboxUrl` through its one client; resolves the JSON answer, throws on a non-2xx. */
export function sandboxControl(sandboxUrl: string): SandboxControl {
  const client = new SandboxControlClient(sandboxUrl);
  return (method, path, body) => client.call(method, path, body);
}

/** A PIN sealed to the stack's workers' key for `workflowId`, as the typed client seals it: what a raw update or start carries. */
export function sealedTestPin(stack: Stack, pin: string, workflowId: string): Promise<SealedPin> {
  return sealPin(pin, { keyId: stack.config.pin.keyId, publicKey: stack.config.pin.publicKey }, workflowId);
}

/** A card action's request with its capability, signed with the stack's card action key as the typed client signs it: what a raw update carries. */
export function allowed<A extends object>(stack: Stack, cardId: string, action: CardAction, args: A = {} as A): WithCapability<A> {
  return new CardActionSigner(stack.config.cardActions.signing).authorise(cardId, action, args);
}

/** Signals as the bridge and the workers send them: with the signal MAC, and addressed to the workflow (shared/signal-origin.ts). */
export function asBridge(stack: Stack, workflowId: string): { signal<T>(def: SignalDefinition<[T]>, body: T): Promise<void> } {
  const handle = stack.signaller.workflow.getHandle(workflowId);
  return { signal: (def, body) => handle.signal(def, addressed(workflowId, body)) };
}
