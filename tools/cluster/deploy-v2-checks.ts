/**
 * What must hold once v2 is current and every flow started so far has ended: pinned flows
 * stayed where they started, new ones ran on v2 (and did what v2 changed), card workflows moved to
 * v2 and replay on its bundle, a v1 history does not replay on v2 (why pinning was needed), v1 drained.
 */
import type { FlowRow } from '../flows';
import { entityWorkflowId } from '../../src/shared/ids';
import { V2_MEMO } from './builds/constants';
import { buildOfPid, historiesOf, pids, placements, say, type Build, type Rollout } from './deploy-context';
import type { Phase, Tracked } from './deploy-flows';
import { first, last, placementOf, replay, type Placement } from './deploy-history';
import type { Drainage } from './deploy-rollout';
import { countBy } from './deploy-report';

type Placed = { t: Tracked; p: Placement; row: FlowRow };

export async function checkV2Rollout(r: Rollout, drainage: Drainage, pinnedInFlight: number): Promise<void> {
  const phases: Phase[] = ['v1 current', 'v2 ramping', 'v2 current'];
  const tracked = r.flows.tracked.filter((t) => phases.includes(t.phase));
  const rows = await Promise.all(tracked.map((t) => t.row));
  say(`step 4: v2 is current and the ${tracked.length} flows started so far have ended; where they ran (their WorkflowTaskCompleted events' deploymentVersion.buildId):`);
  const map = await placements(r, tracked);
  const placed = tracked.map((t, i) => ({ t, p: map.get(t)!, row: rows[i] }));
  pinnedStayedOnV1(r, placed.filter((x) => x.t.phase === 'v1 current'), pinnedInFlight);
  rampFlows(r, placed.filter((x) => x.t.phase === 'v2 ramping'));
  afterPromotion(r, placed.filter((x) => x.t.phase === 'v2 current'));
  await cardWorkflowsMoved(r);
  await v1HistoryBreaksOnV2(r, placed);
  const seen = drainage.seen.map((s) => `${s.status} (+${(s.atMs / 1000).toFixed(1)} s)`).join(' then ');
  r.checks.that(drainage.drained && drainage.seen.some((s) => s.status === 'DRAINING'), `v1 drained: describeDeployment reported it ${seen} after the promotion`);
}

function pinnedStayedOnV1(r: Rollout, placed: Placed[], inFlight: number): void {
  const pinned = placed.filter((x) => x.t.pinned);
  const onV1 = pinned.filter((x) => x.row.ok && x.p.builds.length > 0 && x.p.builds.every((b) => b === 'v1'));
  r.checks.that(onV1.length === pinned.length, `every pinned flow started before the ramp ran all its workflow tasks on v1 and ended as asked: ${onV1.length} of ${pinned.length} (${kinds(pinned)}); ${inFlight} of them were in flight when v2 was promoted`);
  const moving = placed.filter((x) => !x.t.pinned);
  say(`     the auto-upgrading ones started on v1 (${kinds(moving)}): first → last build ${pairs(moving)}`);
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

/** Card workflows auto-upgrade: their last task on v2; those started on v2 carry its marked memo; all replay on v2's bundle. */
async function cardWorkflowsMoved(r: Rollout): Promise<void> {
  const ids = r.flows.cards.map((c) => entityWorkflowId('card', c.cardId));
  const histories = await historiesOf(r, ids);
  const placed = ids.map((id) => ({ id, p: placementOf(histories.get(id)!, buildOfPid(r)) }));
  const moved = placed.filter((x) => first(x.p) === 'v1');
  const onV2 = placed.filter((x) => last(x.p) === 'v2' && x.p.behaviours.every((b) => b === 'AUTO_UPGRADE'));
  r.checks.that(onV2.length === placed.length, `card workflows (AUTO_UPGRADE): ${onV2.length} of ${placed.length} ran their last workflow task on v2, ${moved.length} of them started on v1 and moved`);
  const client = r.cluster.client.temporal.client;
  const memos = await Promise.all(ids.map(async (id) => (await client.workflow.getHandle(id).describe()).memo?.clusterDeploy));
  const marked = placed.filter((x, i) => (memos[i] === V2_MEMO.clusterDeploy) === (first(x.p) === 'v2'));
  r.checks.that(marked.length === placed.length, `v2's marked change: the ${placed.filter((x) => first(x.p) === 'v2').length} card workflows started on v2 carry its memo, the ${moved.length} started on v1 took the old branch on replay`);
  const failures = (await replay(r.bundles.v2, r.cluster.config.codec, ids.map((id) => ({ workflowId: id, history: histories.get(id)! })))).filter((x) => x.error);
  r.checks.that(failures.length === 0, `the ${ids.length} card workflow histories replay on v2's bundle (Worker.runReplayHistories)${failures.length ? `: ${failures.map((f) => `${f.workflowId}: ${f.error!.message}`).join('; ')}` : ''}`);
}

/** The change v2 made without a marker would break a v1 history: the reason v1's flows stayed pinned to v1. */
async function v1HistoryBreaksOnV2(r: Rollout, placed: Placed[]): Promise<void> {
  const sample = placed.find((x) => x.t.phase === 'v1 current' && x.t.flow === 'fundCard' && x.row.ok);
  if (!r.checks.that(sample !== undefined, 'a fundCard that ran on v1 to replay')) return;
  const history = (await historiesOf(r, [sample!.t.workflowId])).get(sample!.t.workflowId)!;
  const on = async (bundle: string) => (await replay(bundle, r.cluster.config.codec, [{ workflowId: sample!.t.workflowId, history }]))[0].error;
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
