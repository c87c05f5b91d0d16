/**
 * P2's control: the bare signalWithStart from a process of its own, as the bridge runs in one, so
 * that the comparison does not charge the bridge for a process boundary the bench's own baseline
 * skips. Configured by the environment (CONTRACTS §2); told the cards, count and rate over IPC;
 * answers each signal's latency (ms).
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../src/config';
import { providerEventSignal } from '../src/shared/messages';
import type { ProviderEvent } from '../src/shared/types';
import { signalEntity } from '../src/temporal/entity-signals';
import { Client, Connection } from '@temporalio/client';
import { createDataConverter } from '../src/codec/payload-codec';
import { clientConnectionOptions } from '../src/temporal/connection';
import { paced } from './lib';

interface Job {
  cards: string[];
  count: number;
  perSecond: number;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const connection = await Connection.connect(clientConnectionOptions(config.temporal));
  // The card workflows decode with our codec, as the bridge's signals are encoded.
  const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec) });
  process.on('message', (job: Job) => {
    void paced(job.count, job.perSecond, async (i) => {
      const cardId = job.cards[i % job.cards.length];
      const event: ProviderEvent = { eventId: `evt_bench_${randomUUID()}`, eventType: 'CARD_TRANSACTION', createdAt: Date.now(), data: { cardId, amount: 1, currency: 'USD', merchantName: 'Bench bare', status: 'APPROVED' } };
      const began = performance.now();
      await signalEntity(client, config.temporal.taskQueue, { kind: 'card', entityId: cardId }, providerEventSignal, [event]);
      return performance.now() - began;
    }).then((latencies) => process.send?.({ latencies }));
  });
  process.once('disconnect', () => void client.connection.close().finally(() => process.exit(0)));
  process.send?.({ ready: true });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench bare signaller: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
