/**
 * What must hold once v2 is current and every flow started so far has ended: pinned flows
 * stayed where they started, new ones ran on v2 (and did what v2 changed), card workflows continued
 * as new onto v2 and their answers held, a v1 history does not replay on v2 (why pinning was needed), v1 drained.
 */
import type { FlowRow } from '../flows';
import { entityWorkflowId } from '../../src/shared/ids';
import { V2_MEMO } from './builds/constants';
import { buildOfPid, chainsOf, historiesOf, pids, placements, say, type Build, type Rollout } from './deploy-context';
import type { Phase, Tracked } from './deploy-flows';
import { continuedAsNew, first, last, placementOf, replay, type Placement } from './deploy-history';
import { until } from './cluster';
import { cardMovementsQuery } from '../../src/shared/messages';
import type { Drainage } from './deploy-rollout';
import { countBy } from './deploy-report';

type Placed = { t: Tracked; p: Placement; row: FlowRow };

export async function checkV2Rollout(r: Rollout, drainage: Drainage, pinnedInFlight: number, cardsWithMoneyInFlight: ReadonlySet<string>): Promise<void> {
  const phases: Phase[] = ['v1 current', 'v2 ramping', 'v2 current'];
  const tracked = r.flows.tracked.filter((t) => phases.includes(t.phase));
  const rows = await Promise.all(tracked.map((t) => t.row));
  say(`step 4: v2 is current and the ${tracked.length} flows started so far have ended; where they ran (their WorkflowTaskCompleted events' deploymentVersion.buildId):`);
  const map = await placements(r, tracked);
  const placed = tracked.map((t, i) => ({ t, p: map.get(t)!, row: rows[i] }));
  pinnedStayedOnV1(r, placed.filter((x) => x.t.phase === 'v1 current'), pinnedInFlight);
  rampFlows(r, placed.filter((x) => x.t.phase === 'v2 ramping'));
  afterPromotion(r, placed.filter((x) => x.t.phase === 'v2 current'));
  await cardWorkflowsMoved(r, cardsWithMoneyInFlight);
  await updatesStillAnswered(r);
  await v1HistoryBreaksOnV2(r, placed);
  const seen = drainage.seen.map((s) => `${s.status} (+${(s.atMs / 1000).toFixed(1)} s)`).join(' then ');
  r.checks.that(drainage.drained && drainage.seen.some((s) => s.status === 'DRAINING'), `v1 drained: describeDeployment reported it ${seen} after the promotion`);
}

function pinnedStayedOnV1(r: Rollout, placed: Placed[], inFlight: number): void {
  const pinned = placed.filter((x) => x.t.pinned);
  const onV1 = pinned.filter((x) => x.row.ok && x.p.builds.length > 0 && x.p.builds.every((b) => b === 'v1'));
  r.checks.that(onV1.length === pinned.length, `every pinned flow started before the ramp ran all its workflow tasks on v1 and ended as asked: ${onV1.length} of ${pinned.length} (${kinds(pinned)}); ${inFlight} of them were in flight when v2 was promoted`);
  const moving = placed.filter((x) => !x.t.pinned);
  // Card updates, payouts and onboardings: pinned long-lived runs since release 4, each moving to a new build at a continue-as-new while it waits.
  say(`     the long-lived ones started on v1 (${kinds(moving)}): first → last build ${pairs(moving)}`);
}

function rampFlows(r: Rollout, placed: Placed[]): void {
  const stayed = placed.filter((x) => x.row.ok && x.p.builds.length > 0 && x.p.builds.every((b) => b === first(x.p)));
  r.checks.that(stayed.length === placed.length, `the ${placed.length} pinned flows started during the 10 % ramp each ran on the one build it started on: ${pairs(placed)}`);
}

function afterPromotion(r: Rollout, placed: Placed[]): void {
  const onV2 = placed.filter((x) => x.row.ok && x.p.builds.length > 0 && x.p.builds.every((b) => b === 'v2'));
  r.checks.that(onV2.length === placed.length, `every flow started after the promotion ran on v2 and ended as asked: ${onV2.length} of ${placed.length} (${kinds(placed)}; for a card update, the tasks that accepted and completed it)`);
  const money = (build: Build) => placed.filter((x) => x.t.flow === 'fundCard' || x.t.flow === 'withdrawFromCard').filter((x) => first(x.p) === build);
  const v2Money = money('v2');
  r.checks.that(v2Money.length > 0 && v2Money.every((x) => x.p.timerFirst && x.p.behaviours.every((b) => b === 'PINNED')), `v2's unmarked change ran: each of the ${v2Money.length} standalone money flows started on v2 started its timer before its first activity, and declared PINNED (v2's own setWorkflowOptions)`);
}

/**
 * Release 3: card workflows are pinned to each run's build. Each run ran on one build; a card
 * started on v1 ran there until v2 was current, then continued as new onto v2 (AUTO_UPGRADE for the
 * new run's first task), also those with a money update in flight at the promotion (the run waits for
 * it, then rolls over); every card's latest run is v2's and carries v2's unmarked memo; and every
 * run replays on the bundle of its own build.
 */
async function cardWorkflowsMoved(r: Rollout, inFlightAtPromotion: ReadonlySet<string>): Promise<void> {
  const ids = r.flows.cards.map((c) => entityWorkflowId('card', c.cardId));
  const chains = await chainsOf(r, ids);
  const runs = ids.map((id) => ({ id, chain: chains.get(id)!, placed: chains.get(id)!.map((h) => placementOf(h, buildOfPid(r))) }));
  const oneBuildEach = runs.filter((x) => x.placed.every((p) => p.builds.length > 0 && p.builds.every((b) => b === first(p)) && p.behaviours.every((b) => b === 'PINNED')));
  r.checks.that(oneBuildEach.length === runs.length, `card workflows (PINNED): in ${oneBuildEach.length} of ${runs.length}, each run ran all its workflow tasks on one build and declared PINNED (${countBy(runs.map((x) => x.placed.map(first).join(' → ')))})`);
  const moved = runs.filter((x) => first(x.placed[0]) === 'v1');
  const rolled = moved.filter((x) => x.placed.some((p, i) => first(p) === 'v1' && first(x.placed[i + 1] ?? p) === 'v2' && continuedAsNew(x.chain[i])?.targetChanged === true));
  const withMoney = rolled.filter((x) => inFlightAtPromotion.has(x.id)).length;
  r.checks.that(moved.length > 0 && rolled.length === moved.length, `the ${moved.length} card workflows started on v1 each continued as new from a v1 run onto v2, in the workflow task where the server said their target build changed: ${rolled.length}; ${withMoney} of them had a money update in flight when v2 was promoted`);
  const onV2 = runs.filter((x) => first(x.placed[x.placed.length - 1]) === 'v2');
  const client = r.cluster.client.temporal.client;
  const memos = await Promise.all(ids.map(async (id) => (await client.workflow.getHandle(id).describe()).memo?.clusterDeploy));
  r.checks.that(onV2.length === runs.length && memos.every((m) => m === V2_MEMO.clusterDeploy), `every card workflow's latest run is on v2 (${onV2.length} of ${runs.length}) and carries v2's unmarked memo (${memos.filter((m) => m === V2_MEMO.clusterDeploy).length})`);
  const latest = runs.map((x) => ({ workflowId: x.id, history: x.chain[x.chain.length - 1] }));
  const failures = (await replay(r.bundles.v2, r.cluster.config, latest)).filter((x) => x.error);
  r.checks.that(failures.length === 0, `the ${latest.length} latest card runs replay on v2's bundle${failures.length ? `: ${failures.map((f) => `${f.workflowId}: ${f.error!.message}`).join('; ')}` : ''}`);
  const sample = moved[0];
  if (sample) {
    const history = [{ workflowId: sample.id, history: sample.chain[0] }];
    const [v1, v2] = [(await replay(r.cluster.env.WORKFLOW_BUNDLE_PATH, r.cluster.config, history))[0].error, (await replay(r.bundles.v2, r.cluster.config, history))[0].error];
    r.checks.that(v1 === undefined && v2?.name === 'DeterminismViolationError', `a card workflow's v1 run replays on v1's bundle and fails on v2's with ${v2?.name ?? 'no error'}: without a marker, only pinning and the continue-as-new kept it off v2`);
  }
}

/**
 * The card updates answered on v1 are answered again, the same, by the card's v2 run (its carried
 * outcomes): the same request under the same key gets the same update ID and status and moves
 * nothing (the books at the end say so), and the v2 run lists each among the card's movements.
 */
export async function updatesStillAnswered(r: Rollout): Promise<void> {
  const v1 = r.flows.tracked.filter((t) => t.phase === 'v1 current' && t.repeat && t.update?.id);
  const again = await Promise.all(v1.map(async (t) => ({ t, answer: await t.repeat!().catch((err: unknown) => ({ updateId: '', status: `${(err as Error).name}: ${(err as Error).message}` })) })));
  const same = again.filter(({ t, answer }) => answer.updateId === t.update!.id && answer.status === t.update!.status);
  const client = r.cluster.client.temporal.client;
  const listed = await Promise.all(v1.map(async (t) => (await client.workflow.getHandle(t.workflowId).query(cardMovementsQuery)).some((m) => m.updateId === t.update!.id)));
  r.checks.that(v1.length > 0 && same.length === v1.length && listed.every(Boolean), `the ${v1.length} card money updates answered on v1, sent again under their keys once their cards ran on v2: ${same.length} answered with the same update ID and status${same.length < v1.length ? ` (${again.filter((x) => !same.includes(x)).slice(0, 3).map((x) => x.answer.status).join('; ')})` : ''}, ${listed.filter(Boolean).length} listed among the v2 run's movements`);
}

/** Waits until every card workflow's latest run is on v2 (it rolled over, or started there). */
export async function cardsOnV2(r: Rollout): Promise<void> {
  const client = r.cluster.client.temporal.client;
  const build = async (cardId: string) => (await client.workflow.getHandle(entityWorkflowId('card', cardId)).describe()).raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId;
  await until('every card workflow on v2', async () => (await Promise.all(r.flows.cards.map((c) => build(c.cardId)))).every((b) => b === 'v2'), 240_000);
}

/** The change v2 made without a marker would break a v1 history: the reason v1's flows stayed pinned to v1. */
async function v1HistoryBreaksOnV2(r: Rollout, placed: Placed[]): Promise<void> {
  const sample = placed.find((x) => x.t.phase === 'v1 current' && x.t.flow === 'fundCard' && x.row.ok);
  if (!r.checks.that(sample !== undefined, 'a fundCard that ran on v1 to replay')) return;
  const history = (await historiesOf(r, [sample!.t.workflowId])).get(sample!.t.workflowId)!;
  const on = async (bundle: string) => (await replay(bundle, r.cluster.config, [{ workflowId: sample!.t.workflowId, history }]))[0].error;
  const [v1, v2] = [await on(r.cluster.env.WORKFLOW_BUNDLE_PATH), await on(r.bundles.v2)];
  r.checks.that(v1 === undefined && v2?.name === 'DeterminismViolationError', `a v1 fundCard history replays on v1's bundle and fails on v2's with ${v2?.name ?? 'no error'}: pinning is what kept such flows on v1`);
}

/** Stops a build's worker processes (SIGTERM: the SDK drains them) once nothing needs them. */
export async function stopBuild(r: Rollout, build: Build): Promise<void> {
  const workers = r.workers[build] ?? [];
  await Promise.all(workers.map((w) => w.process.stop()));
  say(`${build}'s worker processes stopped (pids ${pids(workers)})`);
}

const kinds = (placed: Placed[]) => countBy(placed.map((x) => x.t.flow));
const pairs = (placed: Placed[]) => countBy(placed.map((x) => `${first(x.p)} → ${last(x.p)}`));
