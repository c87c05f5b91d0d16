/**
 * A run as a build from before SHA-256 keys ran it, for the tests of a restart across the key-scheme
 * switch: it records no marker and schedules the real POST activity under its FNV key on the real
 * worker's rate queue. Its history is what the earlier-run lookup reads (activities/earlier-key.ts):
 * a run that scheduled the POST, without a marker that says SHA-256.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../../src/activities';

export interface LegacyMoveInput {
  kind: 'funding' | 'withdrawal';
  cardId: string;
  amount: number;
  idempotencyKey: string;
  /** The real worker's rate queue for the movement. */
  activityQueue: string;
}

export async function legacyMoneyRun(input: LegacyMoveInput): Promise<void> {
  const { moveMoney } = proxyActivities<Activities>({ taskQueue: input.activityQueue, startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } });
  await moveMoney({ kind: input.kind, cardId: input.cardId, amount: input.amount, idempotencyKey: input.idempotencyKey });
}
