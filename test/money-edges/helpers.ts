/** Shared steps of the money-edge tests: a stack on a sandbox profile, the typed client, the ledger as truth. */
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createDataConverter } from '../../src/codec/payload-codec';
import { legacyIdempotencyKey } from '../../src/shared/ids';
import { rateClassQueue } from '../../src/shared/task-queues';
import { connectionOptions } from '../../src/temporal/connection';
import { CardIssuingClient } from '../../src/client';
import type { SandboxConfigPatch } from '../../src/sandbox/control-client';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';
import { waitUntil } from '../helpers/wait';

/** The sandbox answering as CONTRACTS says, and as a provider that answers only what the spec lists. */
export const PROFILES = ['contract', 'minimal'] as const;

export const TIMINGS = { ...FAST_TIMINGS, webhookWaitMs: 500 };

export async function stackOn(profile: (typeof PROFILES)[number], config: SandboxConfigPatch = {}): Promise<Stack> {
  return startStack({ profile, cardProvisioningMs: 50, esimIssueMs: 50, payoutProcessingMs: 300, ...config });
}

export function typedClient(stack: Stack): CardIssuingClient {
  return new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec, cardActionKey: stack.config.cardActions.signing, onDeprecation: () => undefined });
}

export interface Ledger {
  wallet: number;
  cards: Array<{ cardId: string; availableBalance: number }>;
  totals: Record<string, number>;
  violations: unknown[];
}

export const ledger = (stack: Stack): Promise<Ledger> => stack.control<Ledger>('GET', '/ledger');

export async function cardBalance(stack: Stack, cardId: string): Promise<number> {
  return (await ledger(stack)).cards.find((c) => c.cardId === cardId)!.availableBalance;
}

/** Requests the sandbox answered (or held) for one endpoint (ENDPOINTS key). */
export async function requests(stack: Stack, endpointKey: string): Promise<number> {
  const stats = await stack.control<{ endpoints: Record<string, { requests: number }> }>('GET', '/stats');
  return stats.endpoints[endpointKey]?.requests ?? 0;
}

/** Per-endpoint faults (sandbox config `faults.endpoints`), replacing any set before. */
export async function faults(stack: Stack, byEndpoint: Record<string, Record<string, unknown>>): Promise<void> {
  const current = await stack.control<{ faults: { endpoints: Record<string, unknown> } }>('GET', '/config');
  // The sandbox merges each endpoint's fields into what it held: every field is given, so none is left from before (no limit: maxFaults at its maximum).
  const none = { errorRate: 0, hangRate: 0, truncateRate: 0, refuseRate: 0, refuseStatus: 429, maxFaults: 1_000_000, afterEffect: false, beforeEffect: false, opaqueErrors: false, ignoreIdempotencyKey: false };
  const cleared = Object.fromEntries(Object.keys(current.faults.endpoints).map((name) => [name, none]));
  const given = Object.fromEntries(Object.entries(byEndpoint).map(([name, fields]) => [name, { ...none, ...fields }]));
  await stack.control('PUT', '/config', { faults: { endpoints: { ...cleared, ...given } } });
}

/**
 * The first run of a flow moves money and is then lost (terminated, as after an operator's
 * mistake or a failed deploy): `moved` says when the money has moved at the provider.
 */
export async function loseAfterEffect(handle: WorkflowHandle, moved: () => Promise<boolean>): Promise<void> {
  await waitUntil(moved, 60_000, 'the first run moved money');
  await handle.terminate('test: the first run is lost after its call took effect');
}

/**
 * The first run of `workflowId` as a build from before SHA-256 keys ran it: it POSTs the movement under
 * its FNV key through the real activity and records no marker, then it is over (a worker of its own
 * runs its workflow on a side queue; the real workers run the activity).
 */
export async function legacyMoneyRun(stack: Stack, workflowId: string, move: { kind: 'funding' | 'withdrawal'; cardId: string; amount: number }): Promise<void> {
  const purpose = move.kind === 'funding' ? 'fund' : 'wdr';
  const taskQueue = `${stack.taskQueue}-legacy`;
  const connection = await NativeConnection.connect(connectionOptions(stack.config.temporal));
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: require.resolve('./legacy/workflows'),
    dataConverter: createDataConverter(stack.config.codec),
    bundlerOptions: { ignoreModules: ['@temporalio/activity'] },
  });
  try {
    await worker.runUntil(
      stack.client.workflow.execute('legacyMoneyRun', {
        taskQueue,
        workflowId,
        args: [{ ...move, idempotencyKey: legacyIdempotencyKey(purpose, workflowId), activityQueue: rateClassQueue(stack.taskQueue, move.kind) }],
      }),
    );
  } finally {
    await connection.close();
  }
}
