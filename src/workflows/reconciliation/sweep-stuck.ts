/**
 * sweep-stuck (hourly): flows on our queue running longer than their kind is expected to
 * (EXPECTED_FLOW_MS), or waiting on a provider status we do not know (their ProviderStatus
 * search attribute), each with where it waits. It reads Temporal only.
 */
import { EXPECTED_FLOW_MS, literal, parseDuration, type Difference, type DriftReport, type ReconcileInput } from '../../shared/reconciliation';
import { mainQueue, runReconciliation, temporalSide } from './run';
import { declareVersioning } from '../lib/versioning';

export async function sweepStuck(input: ReconcileInput = {}): Promise<DriftReport> {
  const kinds = Object.keys(EXPECTED_FLOW_MS);
  const stuckAfter = input?.stuckAfter === undefined ? undefined : parseDuration(input.stuckAfter);
  const query = () => `TaskQueue = ${literal(mainQueue())} AND ExecutionStatus = 'Running' AND FlowKind IN (${kinds.map(literal).join(', ')})`;
  return runReconciliation('stuck', input, query, async (req) => {
    const page = await temporalSide.flowsPage(req);
    const now = Date.now();
    const kindOf = (f: (typeof page.items)[number]) => f.searchAttributes.FlowKind ?? f.type;
    const expected = (f: (typeof page.items)[number]) => stuckAfter ?? EXPECTED_FLOW_MS[kindOf(f)] ?? Number.POSITIVE_INFINITY;
    const stuck = page.items.filter((f) => f.searchAttributes.ProviderStatus !== undefined || now - f.startTime > expected(f));
    const waits = stuck.length > 0 ? await temporalSide.whereFlowsWait({ flows: stuck.map(({ workflowId, runId }) => ({ workflowId, runId })) }) : [];
    const differences: Difference[] = stuck.map((f, i) => ({
      kind: 'flow-stuck',
      ids: { workflowId: f.workflowId, flowKind: kindOf(f) },
      ours: {
        runningForMs: now - f.startTime,
        expectedMs: expected(f),
        ...(f.searchAttributes.ProviderStatus ? { waitingOnUnknownStatus: f.searchAttributes.ProviderStatus } : {}),
        waitingOn: waits[i],
      },
      workflowId: f.workflowId,
    }));
    return { checked: page.items.length, corrected: 0, differences, nextPageToken: page.nextPageToken };
  });
}

// docs/versioning.md: continued as new over hours: it moves to each new build.
declareVersioning('AUTO_UPGRADE', sweepStuck);
