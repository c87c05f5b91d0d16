/**
 * P3: fundCard flows per second on one worker with the provider's limits lifted, against a bare
 * workflow with one no-op activity on an identical worker, both saturated (every flow started at once).
 * Twice: keyed (a caller's key, the normal case) and keyless (the key derived from the workflow ID,
 * so the earlier-run lookup in visibility before its first POST is included).
 */
import { randomUUID } from 'node:crypto';
import { createCardIssuingClient } from '../src/starter/connect';
import { log, mapLimit, round, startMovementFlow } from './lib';
import { readyCards } from './cards';
import { uniqueQueue, type BenchStack } from './stack';
import { breakdownOf, describeBreakdown, historiesOfEveryRun, summarize, type FlowBreakdown } from './breakdown';
import { entityWorkflowId } from '../src/shared/ids';
import { actionsAbove, type ActionCount } from './actions';

/** Flows of each side's last turn whose histories the breakdown reads. */
const SAMPLE = 40;

/** Turns each side takes; each turn starts its share of the flows at once. */
const TURNS = 4;

export interface P3Result {
  flows: number;
  /** Keyless fundCard (derived key, the earlier-run lookup included). */
  fundCardPerSec: number;
  /** Keyed fundCard (a caller's key: no lookup). */
  fundCardKeyedPerSec: number;
  keyedRatio: number;
  barePerSec: number;
  /** Control: the bare workflow with every project workflow module in its bundle. */
  bareWithProjectPerSec: number;
  /** Control: the bare workflow with only the provider's request rules (src/provider-api) in its bundle. */
  bareWithSchemasPerSec: number;
  /** Control: a bare workflow whose one activity makes fundCard's provider call. */
  bareWithCallPerSec: number;
  ratio: number;
  /** fundCard against the bare workflow making the same provider call: what our layer costs beyond the call. */
  callRatio: number;
  /** Control: the bare workflow making the call, on a worker with our payload codec (history holds only ciphertext). */
  bareWithCallAndCodecPerSec: number;
  /** fundCard against that control: what our layer costs beyond the call and the codec. */
  callCodecRatio: number;
  projectModulesRatio: number;
  failed: number;
  /** Where a flow's time goes, per flow, from a sample of each side's histories (bench/breakdown.ts). */
  breakdown: P3Breakdown;
}

export interface P3Breakdown {
  bare: FlowBreakdown;
  bareWithCall: FlowBreakdown;
  fundCard: FlowBreakdown;
  fundCardKeyed: FlowBreakdown;
  /** The card workflow's work while fundCard ran, divided by the fundCard flows (their tell and its balance reads). */
  cardWorkflowPerFundCard: FlowBreakdown & { runs: number };
  /** Engine actions per movement (the flow and its card workflow's share), and above the bare baseline. */
  actions: { bare: ActionCount; keyed: { total: ActionCount; above: ReturnType<typeof actionsAbove> }; keyless: { total: ActionCount; above: ReturnType<typeof actionsAbove> } };
  /** The fleet's visibility list calls (the earlier-run lookup before a derived key's first POST) per keyless fundCard flow, and their mean time. */
  visibility: { listsPerFlow: number; meanListMs: number; countsPerFlow: number; meanCountMs: number };
}

export async function runP3(stack: BenchStack, flows: number): Promise<P3Result> {
  await stack.control.reset();
  await stack.control.configure({ cardProvisioningMs: 0, rateLimit: { general: 1_000_000, sensitive: 1_000_000, balance: 1_000_000 } });
  const [cardId] = await readyCards(stack, 1);

  // Both workers run side by side and take turns, so that the machine's drift hits both alike.
  const bareQueue = uniqueQueue('p3-bare');
  const fundQueue = uniqueQueue('p3-fund');
  const projectQueue = uniqueQueue('p3-project');
  const bare = await stack.worker('bare', bareQueue);
  const project = await stack.worker('bare-project', projectQueue);
  const schemasQueue = uniqueQueue('p3-schemas');
  const schemas = await stack.worker('bare-schemas', schemasQueue);
  const callQueue = uniqueQueue('p3-call');
  const call = await stack.worker('bare', callQueue, { BENCH_CARD_ID: cardId });
  const codecQueue = uniqueQueue('p3-call-codec');
  const codec = await stack.worker('bare', codecQueue, { BENCH_CARD_ID: cardId, BENCH_CODEC: '1' });
  const fleet = await stack.worker('fleet', fundQueue);
  const flowsClient = await createCardIssuingClient(stack.config(fundQueue));
  let failed = 0;
  const time = { bare: 0, fund: 0, keyed: 0, project: 0, schemas: 0, call: 0, codec: 0 };
  const batch = Math.ceil(flows / TURNS);
  let n = 0;
  // The last turn's workflow IDs per side, and the fundCard turns' time spans (the card workflow's share).
  const ids = { bare: [] as string[], call: [] as string[], fund: [] as string[], keyed: [] as string[] };
  const fundSpans: Array<[number, number]> = [];
  const runBare = async () => {
    time.bare += await saturate('bare', batch, async () => {
      const h = await stack.client().workflow.start('bareOneActivity', { taskQueue: bareQueue, workflowId: `${bareQueue}-${n++}`, args: [] });
      ids.bare.push(h.workflowId);
      return () => h.result();
    });
  };
  const runProject = async () => {
    time.project += await saturate('bare with project modules', batch, async () => {
      const h = await stack.client().workflow.start('bareOneActivity', { taskQueue: projectQueue, workflowId: `${projectQueue}-${n++}`, args: [] });
      return () => h.result();
    });
  };
  const runSchemas = async () => {
    time.schemas += await saturate('bare with request rules', batch, async () => {
      const h = await stack.client().workflow.start('bareOneActivity', { taskQueue: schemasQueue, workflowId: `${schemasQueue}-${n++}`, args: [] });
      return () => h.result();
    });
  };
  const runCall = async () => {
    time.call += await saturate('bare with the provider call', batch, async () => {
      const h = await stack.client().workflow.start('bareProviderCall', { taskQueue: callQueue, workflowId: `${callQueue}-${n++}`, args: [] });
      ids.call.push(h.workflowId);
      return () => h.result();
    });
  };
  const runCodec = async () => {
    time.codec += await saturate('bare with the provider call and the codec', batch, async () => {
      const h = await stack.client().workflow.start('bareProviderCall', { taskQueue: codecQueue, workflowId: `${codecQueue}-${n++}`, args: [] });
      return () => h.result();
    });
  };
  const runFund = async () => {
    const began = Date.now();
    time.fund += await saturate('fundCard', batch, async () => {
      const h = await startMovementFlow(flowsClient, 'fundCard', { cardId, amount: 100 });
      ids.fund.push(h.workflowId);
      return () =>
        h.result().catch((err: unknown) => {
          if (failed++ === 0) log(`P3 first failure: ${(err as Error).message}`);
        });
    });
    fundSpans.push([began, Date.now()]);
  };
  const runKeyed = async () => {
    const began = Date.now();
    time.keyed += await saturate('fundCard keyed', batch, async () => {
      const h = await startMovementFlow(flowsClient, 'fundCard', { cardId, amount: 100, idempotencyKey: randomUUID() });
      ids.keyed.push(h.workflowId);
      return () =>
        h.result().catch((err: unknown) => {
          if (failed++ === 0) log(`P3 first failure: ${(err as Error).message}`);
        });
    });
    fundSpans.push([began, Date.now()]);
  };
  for (let turn = 0; turn < TURNS; turn++) {
    log(`P3 turn ${turn + 1}/${TURNS}`);
    const order = turn % 2 === 0 ? [runBare, runCall, runCodec, runSchemas, runProject, runFund, runKeyed] : [runKeyed, runFund, runProject, runSchemas, runCodec, runCall, runBare];
    if (turn === TURNS - 1) for (const side of Object.values(ids)) side.length = 0;
    for (const run of order) await run();
  }
  const visibility = await fleet.counters();
  await bare.stop();
  await project.stop();
  await schemas.stop();
  await call.stop();
  await codec.stop();
  await fleet.stop();
  await flowsClient.close();
  const total = batch * TURNS;
  const barePerSec = (total * 1000) / time.bare;
  const fundCardPerSec = (total * 1000) / time.fund;
  const bareWithProjectPerSec = (total * 1000) / time.project;
  log(`P3: fundCard ${fundCardPerSec.toFixed(1)} flows/s, bare ${barePerSec.toFixed(1)} flows/s`);
  const fundCardKeyedPerSec = (total * 1000) / time.keyed;
  log(`P3: fundCard keyed ${fundCardKeyedPerSec.toFixed(1)} flows/s`);
  const breakdown = await breakdownAfter(stack, { ids, cardId, fundSpans, fundFlows: 2 * total, keylessFlows: total, visibility });
  return {
    flows: total,
    fundCardPerSec: round(fundCardPerSec, 1),
    fundCardKeyedPerSec: round(fundCardKeyedPerSec, 1),
    keyedRatio: round(fundCardKeyedPerSec / barePerSec),
    barePerSec: round(barePerSec, 1),
    bareWithProjectPerSec: round(bareWithProjectPerSec, 1),
    bareWithSchemasPerSec: round((total * 1000) / time.schemas, 1),
    bareWithCallPerSec: round((total * 1000) / time.call, 1),
    ratio: round(fundCardPerSec / barePerSec),
    callRatio: round(time.call / time.fund),
    bareWithCallAndCodecPerSec: round((total * 1000) / time.codec, 1),
    callCodecRatio: round(time.codec / time.fund),
    projectModulesRatio: round(bareWithProjectPerSec / barePerSec),
    failed,
    breakdown,
  };
}

/** Read after the timed turns (histories and the fleet's counters), so it costs the timing nothing. */
async function breakdownAfter(
  stack: BenchStack,
  run: { ids: Record<'bare' | 'call' | 'fund' | 'keyed', string[]>; cardId: string; fundSpans: Array<[number, number]>; fundFlows: number; keylessFlows: number; visibility: { lists: number; listMs: number; counts: number; countMs: number } },
): Promise<P3Breakdown> {
  const client = stack.client();
  const sample = (ids: string[]) => ids.slice(-SAMPLE);
  const [bare, bareWithCall, fundCard, fundCardKeyed] = await Promise.all([run.ids.bare, run.ids.call, run.ids.fund, run.ids.keyed].map((ids) => breakdownOf(client, sample(ids))));
  // The card workflow's events while fundCard ran (every turn), per fundCard flow.
  const cardRuns = await historiesOfEveryRun(client, entityWorkflowId('card', run.cardId));
  const card = run.fundSpans
    .map(([from, to]) => summarize(cardRuns, run.fundFlows, from, to))
    .reduce<FlowBreakdown | undefined>((sum, b) => (sum ? addBreakdowns(sum, b) : b), undefined)!;
  const v = run.visibility;
  const visibility = {
    listsPerFlow: round(v.lists / run.keylessFlows, 2),
    meanListMs: round(v.listMs / Math.max(1, v.lists), 1),
    countsPerFlow: round(v.counts / run.keylessFlows, 2),
    meanCountMs: round(v.countMs / Math.max(1, v.counts), 1),
  };
  // A standalone movement's actions are its own and its card workflow's share (the tell, the balance read).
  const perMovement = (flow: FlowBreakdown) => {
    const total = addActions(flow.actions, card.actions);
    return { total, above: actionsAbove(total, bare.actions) };
  };
  const actions = { bare: bare.actions, keyed: perMovement(fundCardKeyed), keyless: perMovement(fundCard) };
  const result = { bare, bareWithCall, fundCard, fundCardKeyed, cardWorkflowPerFundCard: { ...card, runs: cardRuns.length }, visibility, actions };
  for (const [name, b] of [['bare', bare], ['bare with the call', bareWithCall], ['fundCard', fundCard], ['fundCard keyed', fundCardKeyed], ['card workflow per fundCard', card]] as const) log(`P3 breakdown ${describeBreakdown(name, b)}`);
  log(`P3 breakdown visibility per fundCard flow: ${visibility.listsPerFlow} list calls (${visibility.meanListMs} ms each), ${visibility.countsPerFlow} count calls (${visibility.meanCountMs} ms each)`);
  return result;
}

/** Two spans' breakdowns of the same workflows, per the same flows: counts add, times average by weight. */
function addBreakdowns(a: FlowBreakdown, b: FlowBreakdown): FlowBreakdown {
  const avg = (x: number, wx: number, y: number, wy: number) => (wx + wy === 0 ? 0 : round((x * wx + y * wy) / (wx + wy), 1));
  const activityTypes: FlowBreakdown['activityTypes'] = { ...a.activityTypes };
  for (const [type, t] of Object.entries(b.activityTypes)) {
    const s = activityTypes[type];
    activityTypes[type] = s ? { perFlow: round(s.perFlow + t.perFlow, 2), waitMs: avg(s.waitMs, s.perFlow, t.waitMs, t.perFlow), runMs: avg(s.runMs, s.perFlow, t.runMs, t.perFlow) } : t;
  }
  return {
    flows: a.flows,
    events: round(a.events + b.events, 2),
    workflowTasks: round(a.workflowTasks + b.workflowTasks, 2),
    workflowTaskWaitMs: avg(a.workflowTaskWaitMs, a.workflowTasks, b.workflowTaskWaitMs, b.workflowTasks),
    workflowTaskRunMs: avg(a.workflowTaskRunMs, a.workflowTasks, b.workflowTaskRunMs, b.workflowTasks),
    activities: round(a.activities + b.activities, 2),
    activityTypes,
    markers: round(a.markers + b.markers, 2),
    upserts: round(a.upserts + b.upserts, 2),
    signalsSent: round(a.signalsSent + b.signalsSent, 2),
    signalsFailed: round(a.signalsFailed + b.signalsFailed, 2),
    signalsReceived: round(a.signalsReceived + b.signalsReceived, 2),
    updates: round(a.updates + b.updates, 2),
    durationMs: a.durationMs,
    actions: addActions(a.actions, b.actions),
  };
}

function addActions(a: ActionCount, b: ActionCount): ActionCount {
  const byKind: ActionCount['byKind'] = { ...a.byKind };
  for (const [kind, n] of Object.entries(b.byKind) as Array<[keyof ActionCount['byKind'], number]>) byKind[kind] = round((byKind[kind] ?? 0) + n, 2);
  return { perFlow: round(a.perFlow + b.perFlow, 2), byKind };
}

/** Starts every flow, then waits for all: ms from the first start to the last completion. */
async function saturate(name: string, flows: number, start: (i: number) => Promise<() => Promise<unknown>>): Promise<number> {
  const began = Date.now();
  const waits = await mapLimit(
    Array.from({ length: flows }, (_, i) => i),
    64,
    (i) => start(i),
  );
  await Promise.all(waits.map((w) => w()));
  const ms = Date.now() - began;
  log(`P3 ${name}: ${flows} flows, ${((flows * 1000) / ms).toFixed(1)} flows/s`);
  return ms;
}
