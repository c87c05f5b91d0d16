/**
 * P2: webhook → workflow. The sandbox emits CARD_TRANSACTION events at a fixed rate; the latency
 * is the sandbox's own record of each delivery (emit → the bridge's 2xx), so it includes the
 * sandbox's delivery path, the bridge and its signalWithStart. The baseline is a bare
 * signalWithStart of the same signal to the same card workflows, at the same rate.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { WEBHOOK_STEPS, type WebhookStep } from '../src/observability/metrics';
import type { DeliveryLog } from '../src/sandbox/control-client';
import { providerEventSignal } from '../src/shared/messages';
import type { ProviderEvent } from '../src/shared/types';
import { signalEntity } from '../src/temporal/entity-signals';
import { log, paced, percentile, round, until } from './lib';
import { readyCards } from './cards';
import { uniqueQueue, type BenchStack } from './stack';

const RATE = 50;
const CARDS = 20;

interface Latencies {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

export interface P2Result {
  events: number;
  perSecond: number;
  webhook: Latencies & { undelivered: number; redelivered: number };
  bare: Latencies;
  p50Ratio: number;
  p99Ratio: number;
  /**
   * Where a webhook's time goes, as means (ms): the bare signalWithStart from the bench; the
   * bridge's own time per accepted webhook (its bridge_signal_duration_seconds: verification,
   * nonce, parsing, routing and its signalWithStart); the whole path as the sandbox records it.
   * bridgeChecks = bridge − bare; deliveryHop = whole − bridge (the sandbox's signing and queueing,
   * the HTTP request and answer).
   */
  hops: { bareMeanMs: number; bridgeMeanMs: number; webhookMeanMs: number; bridgeChecksMs: number; deliveryHopMs: number };
  /** The control: the bare signalWithStart from a process of its own, as the bridge is one. */
  control: Latencies;
  controlP50Ratio: number;
  /** Mean ms of each step of an accepted webhook inside the bridge (bridge_webhook_step_seconds). */
  steps: Record<WebhookStep, number>;
}

export async function runP2(stack: BenchStack, events: number): Promise<P2Result> {
  await stack.control.reset();
  await stack.control.configure({ cardProvisioningMs: 0, rateLimit: { general: 1_000_000, sensitive: 1_000_000, balance: 1_000_000 } });
  const queue = uniqueQueue('p2');
  const fleet = await stack.worker('fleet', queue);
  // With its /metrics: the bridge's own time per webhook (histogram sum and count) splits the path into hops.
  const { opsUrl } = await stack.bridge(queue, { metrics: true });
  const cards = await readyCards(stack, CARDS);
  // Every card's workflow exists (its CARD_CREATED was delivered) before anything is timed.
  await until('CARD_CREATED delivered', async () => ((await deliveries(stack)).every((d) => d.status === 'DELIVERED') ? true : undefined), 60_000);

  // Turns of one second each, bare and through the sandbox alternately, so that drift hits both alike.
  log(`P2: ${events} events each way at ${RATE}/s, in turns of ${RATE}`);
  const client = stack.client();
  const signaller = await forkSignaller(stack.env(queue));
  const control: number[] = [];
  const bare: number[] = [];
  const since = Date.now();
  const turns = Math.ceil(events / RATE);
  for (let turn = 0; turn < turns; turn++) {
    bare.push(
      ...(await paced(RATE, RATE, async (i) => {
        const cardId = cards[i % cards.length];
        const event: ProviderEvent = {
          eventId: `evt_bench_${randomUUID()}`,
          eventType: 'CARD_TRANSACTION',
          createdAt: Date.now(),
          data: { cardId, amount: 1, currency: 'USD', merchantName: 'Bench bare', status: 'APPROVED' },
        };
        const began = performance.now();
        await signalEntity(client, queue, { kind: 'card', entityId: cardId }, providerEventSignal, [event]);
        return performance.now() - began;
      })),
    );
    await paced(RATE, RATE, (i) => stack.control.cardTransaction(cards[i % cards.length], 1, 'Bench'));
    await settled(stack, since, (turn + 1) * RATE);
    control.push(...(await signaller.run({ cards, count: RATE, perSecond: RATE })));
  }
  signaller.stop();
  const ours = await settled(stack, since, turns * RATE);
  const bridgeMetrics = await (await fetch(`${opsUrl!}/metrics`)).text();
  const bridgeMeanMs = meanOf(bridgeMetrics, 'bridge_signal_duration_seconds');
  const steps = Object.fromEntries(WEBHOOK_STEPS.map((step) => [step, round(meanOf(bridgeMetrics, 'bridge_webhook_step_seconds', `step="${step}"`), 3)])) as Record<WebhookStep, number>;
  await fleet.stop();
  const webhookMs = ours.filter((d) => d.deliveredAt !== undefined).map((d) => d.deliveredAt! - d.createdAt);
  const webhook = { ...summary(webhookMs), undelivered: ours.length - webhookMs.length, redelivered: ours.filter((d) => d.attempts.length > 1).length };
  const bareSummary = summary(bare);
  const hops = hopsOf(mean(bare), bridgeMeanMs, mean(webhookMs));
  log(`P2: webhook p50 ${webhook.p50} p99 ${webhook.p99} ms; bare p50 ${bareSummary.p50} p99 ${bareSummary.p99} ms`);
  log(`P2 hops (means): bare signalWithStart ${hops.bareMeanMs} ms; in the bridge ${hops.bridgeMeanMs} ms (checks ${hops.bridgeChecksMs}); delivery hop ${hops.deliveryHopMs}; whole ${hops.webhookMeanMs} ms`);
  const controlSummary = summary(control);
  log(`P2 control (bare signalWithStart from its own process): p50 ${controlSummary.p50} p99 ${controlSummary.p99} ms; bridge steps (mean ms) ${JSON.stringify(steps)}`);
  return {
    hops,
    control: controlSummary,
    controlP50Ratio: round(webhook.p50 / controlSummary.p50),
    steps,
    events,
    perSecond: RATE,
    webhook,
    bare: bareSummary,
    p50Ratio: round(webhook.p50 / bareSummary.p50),
    p99Ratio: round(webhook.p99 / bareSummary.p99),
  };
}

/** The sandbox's log of this measure's CARD_TRANSACTION events once `count` of them are delivered or failed. */
function settled(stack: BenchStack, since: number, count: number): Promise<DeliveryLog[]> {
  return until(
    'CARD_TRANSACTION deliveries settled',
    async () => {
      const log = (await deliveries(stack)).filter((d) => d.eventType === 'CARD_TRANSACTION' && d.createdAt >= since);
      return log.length >= count && log.every((d) => d.status !== 'PENDING') ? log : undefined;
    },
    180_000,
    200,
  );
}

function summary(ms: number[]): Latencies {
  return { p50: round(percentile(ms, 50), 1), p99: round(percentile(ms, 99), 1), max: round(Math.max(...ms), 1), count: ms.length };
}

function deliveries(stack: BenchStack): Promise<DeliveryLog[]> {
  return stack.control.webhooks();
}

function mean(ms: number[]): number {
  return ms.reduce((a, b) => a + b, 0) / Math.max(ms.length, 1);
}

function hopsOf(bareMeanMs: number, bridgeMeanMs: number, webhookMeanMs: number): P2Result['hops'] {
  return {
    bareMeanMs: round(bareMeanMs, 2),
    bridgeMeanMs: round(bridgeMeanMs, 2),
    webhookMeanMs: round(webhookMeanMs, 2),
    bridgeChecksMs: round(bridgeMeanMs - bareMeanMs, 2),
    deliveryHopMs: round(webhookMeanMs - bridgeMeanMs, 2),
  };
}

/** A histogram's mean in ms since the bridge started (CARD_CREATED deliveries included: a few of hundreds), of the series with `labels` when given. */
function meanOf(text: string, name: string, labels?: string): number {
  const value = (series: string) => Number(new RegExp(`^${series}${labels ? `\\{${labels}\\}` : '(?:\\{[^}]*\\})?'} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return (value(`${name}_sum`) / value(`${name}_count`)) * 1000;
}

interface Signaller {
  run(job: { cards: string[]; count: number; perSecond: number }): Promise<number[]>;
  stop(): void;
}

/** bench/bare-signaller.ts in a process of its own, configured like the bridge. */
async function forkSignaller(env: Record<string, string>): Promise<Signaller> {
  const child = fork(require.resolve('./bare-signaller'), [], { env: { ...process.env, ...env }, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T>(key: string) => new Promise<T>((resolve, reject) => {
    const onMessage = (msg: Record<string, unknown>) => {
      if (!(key in msg)) return;
      child.off('message', onMessage);
      resolve(msg[key] as T);
    };
    child.on('message', onMessage);
    child.once('exit', () => reject(new Error('the bare signaller exited')));
  });
  await next('ready');
  return {
    run: (job) => {
      const answer = next<number[]>('latencies');
      child.send(job);
      return answer;
    },
    stop: () => child.disconnect(),
  };
}
