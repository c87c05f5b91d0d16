/**
 * P3: fundCard flows per second on one worker with the provider's limits lifted, against a bare
 * workflow with one no-op activity on an identical worker, both saturated (every flow started at once).
 */
import { createCardIssuingClient } from '../src/starter';
import { log, mapLimit, round } from './lib';
import { readyCards } from './cards';
import { uniqueQueue, type BenchStack } from './stack';

export interface P3Result {
  flows: number;
  fundCardPerSec: number;
  barePerSec: number;
  ratio: number;
  failed: number;
}

export async function runP3(stack: BenchStack, flows: number): Promise<P3Result> {
  await stack.control('POST', '/reset');
  await stack.control('PUT', '/config', { cardProvisioningMs: 0, rateLimit: { general: 1_000_000, sensitive: 1_000_000, balance: 1_000_000 } });
  const [cardId] = await readyCards(stack, 1);

  const bareQueue = uniqueQueue('p3-bare');
  const bare = await stack.worker('bare', bareQueue);
  const barePerSec = await saturate('bare', flows, async (i) => {
    const h = await stack.client().workflow.start('bareOneActivity', { taskQueue: bareQueue, workflowId: `${bareQueue}-${i}`, args: [] });
    return () => h.result();
  });
  await bare.stop();

  const fundQueue = uniqueQueue('p3-fund');
  const fleet = await stack.worker('fleet', fundQueue);
  const flowsClient = await createCardIssuingClient(stack.config(fundQueue));
  let failed = 0;
  const fundCardPerSec = await saturate('fundCard', flows, async () => {
    const h = await flowsClient.startFundCard({ cardId, amount: 100 });
    return () =>
      h.result().catch((err: unknown) => {
        if (failed++ === 0) log(`P3 first failure: ${(err as Error).message} ${String((err as { cause?: Error }).cause?.message ?? "")}`);
      });
  });
  await fleet.stop();
  await flowsClient.close();
  return { flows, fundCardPerSec: round(fundCardPerSec, 1), barePerSec: round(barePerSec, 1), ratio: round(fundCardPerSec / barePerSec), failed };
}

/** Starts every flow, then waits for all: flows per second from the first start to the last completion. */
async function saturate(name: string, flows: number, start: (i: number) => Promise<() => Promise<unknown>>): Promise<number> {
  log(`P3 ${name}: ${flows} flows`);
  const began = Date.now();
  const waits = await mapLimit(
    Array.from({ length: flows }, (_, i) => i),
    64,
    (i) => start(i),
  );
  await Promise.all(waits.map((w) => w()));
  const perSec = (flows * 1000) / (Date.now() - began);
  log(`P3 ${name}: ${perSec.toFixed(1)} flows/s`);
  return perSec;
}
