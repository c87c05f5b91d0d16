/**
 * P5: the card update users run (`client.fundCard` with a caller's key: an update of the card's
 * workflow, started with it when there is none) against a bare entity workflow that takes an
 * update-with-start and makes the same provider call, each side on a worker process of its own, in
 * alternating turns on one server (docs/performance.md):
 *
 * - throughput: movements one after another on each card, the cards in parallel (saturated);
 * - latency: the caller's call to its result at a moderate rate, one movement in flight per card;
 * - one card: movements one after another on a single card (the card serialises them);
 * - actions per movement, counted from the histories of every turn (bench/actions.ts).
 */
import { openItemId } from '../src/shared/open-items';
import { randomUUID } from 'node:crypto';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { createCardIssuingClient } from '../src/starter/connect';
import { entityWorkflowId } from '../src/shared/ids';
import { actionsAbove, actionsOf, type ActionCount } from './actions';
import { describeBreakdown, historiesOfEveryRun, summarize, type FlowBreakdown } from './breakdown';
import { readyCards } from './cards';
import { log, mapLimit, paced, percentile, round } from './lib';
import { uniqueQueue, type BenchStack } from './stack';
import { bareFundUpdate } from './workflows';

export interface P5Sizes {
  cards: number;
  /** Movements per card in each saturated turn. */
  perCard: number;
  /** Movements per side per latency turn, and their rate per second across the cards. */
  paced: number;
  ratePerSec: number;
  /** Movements per side on the single card. */
  oneCard: number;
}

interface Side {
  name: 'card update' | 'bare' | 'bare with codec';
  move(cardId: string): Promise<unknown>;
  /** The workflows whose histories hold this side's work. */
  workflowIds(cards: string[]): string[];
  /** Workflows of its own each movement starts (our side: its attempt, issue 51), whose actions it pays too. */
  perMovementWorkflows: string[];
  spans: Array<[number, number]>;
  movements: number;
  failed: number;
}

const TURNS = 2;
const AMOUNT = 100;

export async function runP5(stack: BenchStack, sizes: P5Sizes): Promise<Record<string, unknown>> {
  await stack.control.reset();
  await stack.control.configure({ cardProvisioningMs: 0, rateLimit: { general: 1_000_000, sensitive: 1_000_000, balance: 1_000_000 } });
  const cards = await readyCards(stack, sizes.cards);
  const oursQueue = uniqueQueue('p5-card');
  const bareQueue = uniqueQueue('p5-bare');
  const fleet = await stack.worker('fleet', oursQueue);
  const bareWorker = await stack.worker('bare', bareQueue);
  // Control: the bare entity with our payload codec on its worker and client (what the codec's rule costs on this path).
  const codecQueue = uniqueQueue('p5-bare-codec');
  const codecWorker = await stack.worker('bare', codecQueue, { BENCH_CODEC: '1' });
  const client = await createCardIssuingClient(stack.config(oursQueue));
  const temporal = stack.client();
  // The bare side is bare: no payload codec on its worker, so none on its client either.
  const plain = new Client({ connection: temporal.connection, namespace: temporal.options.namespace });
  const ours: Side = side(
    'card update',
    async (cardId) => {
      const moved = await client.fundCard({ cardId, amount: AMOUNT, idempotencyKey: randomUUID() });
      // Each movement's attempt (recorded before its POST: docs/idempotency.md) is a workflow of its own, billed as ours.
      ours.perMovementWorkflows.push(openItemId({ workflowId: entityWorkflowId('card', cardId), updateId: moved.updateId }));
      return moved;
    },
    (ids) => ids.map((id) => entityWorkflowId('card', id)),
  );
  const bare = side('bare', (cardId) => bareMove(plain, bareQueue, cardId), (ids) => ids.map((id) => `${bareQueue}/${id}`));
  const withCodec = side('bare with codec', (cardId) => bareMove(temporal, codecQueue, cardId), (ids) => ids.map((id) => `${codecQueue}/${id}`));
  try {
    // Each card's workflow exists before anything is timed: a start is paid once per card, not per movement.
    for (const s of [ours, bare, withCodec]) {
      await mapLimit(cards, cards.length, (cardId) =>
        s.move(cardId).catch((err: Error & { cause?: Error }) => Promise.reject(new Error(`P5 ${s.name}: the first movement on ${cardId} failed: ${err.message}${err.cause ? ` (${err.cause.message})` : ''}`))),
      );
    }

    const throughput = { ours: 0, bare: 0, codec: 0 };
    for (let turn = 0; turn < TURNS; turn++) {
      log(`P5 throughput turn ${turn + 1}/${TURNS}`);
      for (const s of turn % 2 === 0 ? [ours, bare, withCodec] : [withCodec, bare, ours]) {
        const time = await timed(s, () => mapLimit(cards, cards.length, async (cardId) => {
          for (let i = 0; i < sizes.perCard; i++) await attempt(s, cardId);
        }));
        throughput[s === ours ? 'ours' : s === bare ? 'bare' : 'codec'] += time;
      }
    }
    const saturatedMovements = TURNS * cards.length * sizes.perCard;

    const latencies = { ours: [] as number[], bare: [] as number[] };
    const latencySpans = new Map<Side, Array<[number, number]>>();
    for (let turn = 0; turn < TURNS; turn++) {
      log(`P5 latency turn ${turn + 1}/${TURNS}`);
      for (const s of turn % 2 === 0 ? [bare, ours] : [ours, bare]) {
        const began = Date.now();
        await timed(s, () => paced(sizes.paced, sizes.ratePerSec, async (i) => {
          const called = performance.now();
          await attempt(s, cards[i % cards.length]);
          latencies[s === ours ? 'ours' : 'bare'].push(performance.now() - called);
        }));
        latencySpans.set(s, [...(latencySpans.get(s) ?? []), [began, Date.now()]]);
      }
    }

    const oneCard = { ours: 0, bare: 0 };
    for (let turn = 0; turn < TURNS; turn++) {
      log(`P5 one-card turn ${turn + 1}/${TURNS}`);
      for (const s of turn % 2 === 0 ? [ours, bare] : [bare, ours]) {
        oneCard[s === ours ? 'ours' : 'bare'] += await timed(s, async () => {
          for (let i = 0; i < sizes.oneCard; i++) await attempt(s, cards[0]);
        });
      }
    }

    const [oursActions, bareActions] = await Promise.all([ours, bare].map((s) => actionsOfSide(temporal, s, cards)));
    // Where a movement's time goes at the moderate rate (no queueing): the latency turns' events, per movement.
    const [oursLatency, bareLatency] = await Promise.all([ours, bare].map((s) => latencyBreakdown(temporal, s, cards, latencySpans.get(s)!, sizes.paced * TURNS)));
    log(`P5 breakdown ${describeBreakdown('card update', oursLatency)}`);
    log(`P5 breakdown ${describeBreakdown('bare', bareLatency)}`);
    const perSec = (movements: number, ms: number) => round((movements * 1000) / ms, 1);
    const stats = (values: number[]) => ({ p50: round(percentile(values, 50), 1), p99: round(percentile(values, 99), 1) });
    const l = { ours: stats(latencies.ours), bare: stats(latencies.bare) };
    const result = {
      cards: cards.length,
      movements: { ours: ours.movements, bare: bare.movements },
      failed: { ours: ours.failed, bare: bare.failed },
      throughput: { oursPerSec: perSec(saturatedMovements, throughput.ours), barePerSec: perSec(saturatedMovements, throughput.bare), bareWithCodecPerSec: perSec(saturatedMovements, throughput.codec), movements: saturatedMovements },
      throughputRatio: round(throughput.bare / throughput.ours),
      latency: { ratePerSec: sizes.ratePerSec, movements: sizes.paced * TURNS, ours: l.ours, bare: l.bare },
      p50Ratio: round(l.ours.p50 / l.bare.p50),
      p99Ratio: round(l.ours.p99 / l.bare.p99),
      oneCard: { oursPerSec: perSec(TURNS * sizes.oneCard, oneCard.ours), barePerSec: perSec(TURNS * sizes.oneCard, oneCard.bare), oursMsPerMovement: round(oneCard.ours / (TURNS * sizes.oneCard), 1) },
      actions: { ours: oursActions, bare: bareActions, above: actionsAbove(oursActions, bareActions) },
      breakdown: { ours: oursLatency, bare: bareLatency },
    };
    log(`P5: ${result.throughput.oursPerSec} vs ${result.throughput.barePerSec} movements/s; p50 ${l.ours.p50} vs ${l.bare.p50} ms, p99 ${l.ours.p99} vs ${l.bare.p99} ms; actions ${oursActions.perFlow} vs ${bareActions.perFlow}`);
    return result;
  } finally {
    await client.close();
    await fleet.stop();
    await bareWorker.stop();
    await codecWorker.stop();
    await terminateAll(temporal, bare.workflowIds(cards));
    await terminateAll(temporal, withCodec.workflowIds(cards));
  }
}

function side(name: Side['name'], move: Side['move'], workflowIds: Side['workflowIds']): Side {
  return { name, move, workflowIds, perMovementWorkflows: [], spans: [], movements: 0, failed: 0 };
}

/** One movement of a timed turn: counted, and a failure counted rather than thrown (a failed run shows in `failed`). */
async function attempt(s: Side, cardId: string): Promise<void> {
  s.movements++;
  try {
    await s.move(cardId);
  } catch (err) {
    if (s.failed++ === 0) log(`P5 ${s.name}: first failure: ${(err as Error).message}`);
  }
}

/** Runs a turn, records its span for the action count, and resolves its duration in ms. */
async function timed(s: Side, turn: () => Promise<unknown>): Promise<number> {
  const began = Date.now();
  await turn();
  const ended = Date.now();
  s.spans.push([began, ended]);
  return ended - began;
}

/** The bare side's movement: update-with-start of its entity, under a fresh key. */
function bareMove(temporal: Client, taskQueue: string, cardId: string): Promise<unknown> {
  const startWorkflowOperation = new WithStartWorkflowOperation('bareCardEntity', { workflowId: `${taskQueue}/${cardId}`, taskQueue, workflowIdConflictPolicy: 'USE_EXISTING' });
  return temporal.workflow.executeUpdateWithStart(bareFundUpdate, { args: [{ cardId, amount: AMOUNT, idempotencyKey: randomUUID() }], startWorkflowOperation });
}

/** The side's actions in its timed turns, per movement timed; and each movement's own workflows (its attempt), per movement. */
async function actionsOfSide(temporal: Client, s: Side, cards: string[]): Promise<ActionCount> {
  const histories = (await Promise.all(s.workflowIds(cards).map((id) => historiesOfEveryRun(temporal, id)))).flat();
  const perSpan = s.spans.map(([from, to]) => actionsOf(histories, 1, from, to));
  const byKind: ActionCount['byKind'] = {};
  for (const a of perSpan) for (const [kind, n] of Object.entries(a.byKind)) byKind[kind as keyof typeof byKind] = (byKind[kind as keyof typeof byKind] ?? 0) + n;
  const movements = Math.max(1, s.movements);
  for (const kind of Object.keys(byKind) as Array<keyof typeof byKind>) byKind[kind] = byKind[kind]! / movements;
  let perFlow = perSpan.reduce((sum, a) => sum + a.perFlow, 0) / movements;
  if (s.perMovementWorkflows.length > 0) {
    const attempts = await mapLimit(s.perMovementWorkflows, 20, async (id) => (await temporal.workflow.getHandle(id).fetchHistory()).events ?? []);
    const each = actionsOf(attempts, attempts.length);
    perFlow += each.perFlow;
    for (const [kind, n] of Object.entries(each.byKind)) byKind[kind as keyof typeof byKind] = (byKind[kind as keyof typeof byKind] ?? 0) + n;
  }
  for (const kind of Object.keys(byKind) as Array<keyof typeof byKind>) byKind[kind] = round(byKind[kind]!, 2);
  return { perFlow: round(perFlow, 2), byKind };
}

/** The side's events in its latency turns, per movement (bench/breakdown.ts). */
async function latencyBreakdown(temporal: Client, s: Side, cards: string[], spans: Array<[number, number]>, movements: number): Promise<FlowBreakdown> {
  const histories = (await Promise.all(s.workflowIds(cards).map((id) => historiesOfEveryRun(temporal, id)))).flat();
  const within = histories.map((events) => events.filter((e) => spans.some(([from, to]) => eventMs(e) >= from && eventMs(e) <= to)));
  return summarize(within, movements);
}

const eventMs = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }): number => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

async function terminateAll(temporal: Client, workflowIds: string[]): Promise<void> {
  await mapLimit(workflowIds, 10, (id) => temporal.workflow.getHandle(id).terminate('bench done').catch(() => undefined));
}
