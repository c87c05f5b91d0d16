/**
 * P3: fundCard flows per second on one worker with the provider's limits lifted, against a bare
 * workflow with one no-op activity on an identical worker, both saturated (every flow started at once).
 */
import { createCardIssuingClient } from '../src/starter/connect';
import { log, mapLimit, round, startMovementFlow } from './lib';
import { readyCards } from './cards';
import { uniqueQueue, type BenchStack } from './stack';

/** Turns each side takes; each turn starts its share of the flows at once. */
const TURNS = 4;

export interface P3Result {
  flows: number;
  fundCardPerSec: number;
  barePerSec: number;
  /** Control: the bare workflow with every project workflow module in its bundle. */
  bareWithProjectPerSec: number;
  /** Control: the bare workflow with only the provider's request rules (src/provider/api) in its bundle. */
  bareWithSchemasPerSec: number;
  /** Control: a bare workflow whose one activity makes fundCard's provider call. */
  bareWithCallPerSec: number;
  ratio: number;
  /** fundCard against the bare workflow making the same provider call: what our layer costs beyond the call. */
  callRatio: number;
  projectModulesRatio: number;
  failed: number;
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
  const fleet = await stack.worker('fleet', fundQueue);
  const flowsClient = await createCardIssuingClient(stack.config(fundQueue));
  let failed = 0;
  const time = { bare: 0, fund: 0, project: 0, schemas: 0, call: 0 };
  const batch = Math.ceil(flows / TURNS);
  let n = 0;
  const runBare = async () => {
    time.bare += await saturate('bare', batch, async () => {
      const h = await stack.client().workflow.start('bareOneActivity', { taskQueue: bareQueue, workflowId: `${bareQueue}-${n++}`, args: [] });
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
      return () => h.result();
    });
  };
  const runFund = async () => {
    time.fund += await saturate('fundCard', batch, async () => {
      const h = await startMovementFlow(flowsClient, 'fundCard', { cardId, amount: 100 });
      return () =>
        h.result().catch((err: unknown) => {
          if (failed++ === 0) log(`P3 first failure: ${(err as Error).message}`);
        });
    });
  };
  for (let turn = 0; turn < TURNS; turn++) {
    log(`P3 turn ${turn + 1}/${TURNS}`);
    const order = turn % 2 === 0 ? [runBare, runCall, runSchemas, runProject, runFund] : [runFund, runProject, runSchemas, runCall, runBare];
    for (const run of order) await run();
  }
  await bare.stop();
  await project.stop();
  await schemas.stop();
  await call.stop();
  await fleet.stop();
  await flowsClient.close();
  const total = batch * TURNS;
  const barePerSec = (total * 1000) / time.bare;
  const fundCardPerSec = (total * 1000) / time.fund;
  const bareWithProjectPerSec = (total * 1000) / time.project;
  log(`P3: fundCard ${fundCardPerSec.toFixed(1)} flows/s, bare ${barePerSec.toFixed(1)} flows/s`);
  return {
    flows: total,
    fundCardPerSec: round(fundCardPerSec, 1),
    barePerSec: round(barePerSec, 1),
    bareWithProjectPerSec: round(bareWithProjectPerSec, 1),
    bareWithSchemasPerSec: round((total * 1000) / time.schemas, 1),
    bareWithCallPerSec: round((total * 1000) / time.call, 1),
    ratio: round(fundCardPerSec / barePerSec),
    callRatio: round(time.call / time.fund),
    projectModulesRatio: round(bareWithProjectPerSec / barePerSec),
    failed,
  };
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
