/**
 * The marker gate's two queries (temporal/marker-gate.ts): what blocks a build of release 4 (the
 * long-lived types release 3 pinned, when a run of them is not pinned) and what a ramp or promotion
 * holds on its build (the payouts and onboardings release 3 let auto-upgrade). The Nexus relay is in
 * neither: it asked no marker in release 3, and its unversioned workers never pin it. Pure: strings only.
 */
import { markerGateQuery, RELEASE_3_AUTO_UPGRADING } from '../../src/temporal/marker-gate';
import { ROLLING_FLOWS } from '../../src/shared/pinned-flows';

const typesOf = (query: string) => [...query.matchAll(/WorkflowType IN \(([^)]*)\)/g)][0][1].split(', ').map((t) => t.replace(/'/g, ''));

test('blocking: every rolling type but the relay and the three release 3 let auto-upgrade; only running runs that are not pinned, on the given queues', () => {
  const query = markerGateQuery(['q', 'q-nexus-a']);
  expect(typesOf(query).sort()).toEqual(ROLLING_FLOWS.filter((t) => t !== 'onboardingRelay' && !(RELEASE_3_AUTO_UPGRADING as readonly string[]).includes(t)).sort());
  expect(query).toContain("ExecutionStatus = 'Running' AND TaskQueue IN ('q', 'q-nexus-a')");
  expect(query).toContain("(TemporalWorkflowVersioningBehavior IS NULL OR TemporalWorkflowVersioningBehavior != 'Pinned')");
});

test('to hold: exactly sendPayout, trackPayout and onboardCardholder, each also a rolling type of release 4', () => {
  expect(typesOf(markerGateQuery(['q'], 'toHold')).sort()).toEqual(['onboardCardholder', 'sendPayout', 'trackPayout']);
  for (const type of RELEASE_3_AUTO_UPGRADING) expect(ROLLING_FLOWS).toContain(type);
});

test('queue names are quoted as literals', () => {
  expect(markerGateQuery(["q'; DROP"])).toContain("TaskQueue IN ('q''; DROP')");
});
