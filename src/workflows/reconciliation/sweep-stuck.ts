/**
 * sweep-stuck (hourly): flows on our queue running longer than their kind is expected to
 * (EXPECTED_FLOW_MS), or waiting on a provider status their kind does not know (their ProviderStatus
 * search attribute), each with where it waits. It reads Temporal only.
 */
import { EXPECTED_FLOW_MS, literal, parseDuration, type Difference, type DriftReport, type ReconcileInput } from '../../shared/reconciliation';
import { isUnknownStatus, type StatusResource } from '../../shared/statuses';
import { mainQueue, runReconciliation, temporalSide } from './run';
import { declareVersioning } from '../lib/versioning';

/** The resource whose statuses each flow kind waits on (shared/statuses.ts). */
const RESOURCE_OF: Readonly<Record<string, StatusResource>> = {
  issueCard: 'card', fundCard: 'operation', withdrawFromCard: 'operation', onboardCardholder: 'kyc',
  purchaseEsim: 'esimOrder', rechargeEsim: 'esimOrder', sendPayout: 'payout', trackPayout: 'payout',
};

function waitsOnUnknownStatus(kind: string, status: string): boolean {
  const resource = RESOURCE_OF[kind];
  return resource === undefined || isUnknownStatus(resource, status);
}

export async function sweepStuck(input: ReconcileInput = {}): Promise<DriftReport> {
  const kinds = Object.keys(EXPECTED_FLOW_MS);
  const stuckAfter = input?.stuckAfter === undefined ? undefined : parseDuration(input.stuckAfter);
  const query = () => `TaskQueue = ${literal(mainQueue())} AND ExecutionStatus = 'Running' AND FlowKind IN (${kinds.map(literal).join(', ')})`;
  return runReconciliation('stuck', input, query, async (req) => {
    const page = await temporalSide.flowsPage(req);
    const now = Date.now();
    const kindOf = (f: (typeof page.items)[number]) => f.searchAttributes.FlowKind ?? f.type;
    const expected = (f: (typeof page.items)[number]) => stuckAfter ?? EXPECTED_FLOW_MS[kindOf(f)] ?? Number.POSITIVE_INFINITY;
    const late = (f: (typeof page.items)[number]) => now - f.startTime > expected(f);
    // Stuck means past what the kind's own timings allow, or waiting on a status we do not know: a KYC review
    // PENDING for a day is normal work.
    const onKnownStatus = (f: (typeof page.items)[number]) => f.searchAttributes.ProviderStatus !== undefined && !waitsOnUnknownStatus(kindOf(f), f.searchAttributes.ProviderStatus);
    const stuck = page.items.filter((f) => late(f) || (f.searchAttributes.ProviderStatus !== undefined && !onKnownStatus(f)));
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

// docs/versioning.md: a schedule's run continued as new over hours, pinned to each run's build; moves to a new build between pages (run.ts, lib/roll-over.ts).
declareVersioning('PINNED', sweepStuck);
