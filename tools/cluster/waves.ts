/**
 * The cluster smoke's schedule: the demo's flows (tools/flows.ts) plus a second card and
 * trackPayout, started in waves so that a worker and a bridge die, and the Temporal server
 * restarts, while flows wait on the provider.
 */
import type { AppProcess } from '../processes';
import { startFlow, type FlowName, type FlowRow, type FlowRun } from '../flows';
import type { ClusterServer } from './temporal-server';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the smoke breaks mid-run. */
export interface Disruptions {
  server: Pick<ClusterServer, 'restart'>;
  worker: Pick<AppProcess, 'kill' | 'name' | 'pid'>;
  bridge: Pick<AppProcess, 'kill' | 'name' | 'pid'>;
}

/**
 * The demo's flows (tools/flows.ts) plus a second card and trackPayout, in four waves: the worker
 * and bridge kills fall in the middle of the second, the server restart in the middle of the third.
 */
export async function runWaves(run: FlowRun, ctx: Disruptions, say: (line: string) => void): Promise<FlowRow[]> {
  const rows: FlowRow[] = [];
  const wave = async (names: FlowName[], disrupt: (inFlight: number) => Promise<void>) => {
    const started = [];
    for (const name of names) started.push(await startFlow(name, run));
    await disrupt(started.length);
    for (const flow of started) rows.push(await flow.row);
  };
  // Wave 1: a card for the card flows.
  await wave(['issue card'], async () => undefined);
  if (!run.made.cardId) return rows;
  // Wave 2: kill worker-1 and bridge-1 while these wait on the provider and its webhooks.
  await wave(['fund card (update)', 'issue a second card', 'KYC onboarding', 'KYC onboarding (rejected)', 'eSIM purchase', 'payout'], async (inFlight) => {
    await pause(700);
    await ctx.worker.kill();
    say(`killed ${ctx.worker.name} (SIGKILL to process group ${ctx.worker.pid}) with ${inFlight} flows in flight`);
    await ctx.bridge.kill();
    say(`killed ${ctx.bridge.name} (SIGKILL to process group ${ctx.bridge.pid}); the sandbox keeps sending it every other delivery attempt`);
  });
  // Wave 3: restart the Temporal server while these are in flight.
  const wave3: FlowName[] = ['withdraw from card (update)', 'track payout', 'failing card (firstName FAIL)'];
  await wave(run.made.esimNo ? [...wave3, 'eSIM recharge'] : wave3, async (inFlight) => {
    await pause(500);
    const restartStarted = Date.now();
    await ctx.server.restart();
    say(`restarted the Temporal server (down and serving again in ${Date.now() - restartStarted} ms) with ${inFlight} flows in flight`);
  });
  // Wave 4: the card's own workflow, after the restart.
  for (const name of ['freeze (update)', 'unfreeze (update)', 'card transaction (webhook)', 'card state (query)', 'reveal sensitive (sealed)', 'delete card (update)'] as const) {
    rows.push(await (await startFlow(name, run)).row);
  }
  return rows;
}
