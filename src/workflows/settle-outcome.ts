/**
 * settleOutcome: an operator settles a flow that could not learn whether the provider moved its
 * money (issue 29). Run under `settlement/<workflowId>` (`starter settle`); it asks the provider
 * under every key, merOrderNo or card the flow's runs that did not complete could have used (the
 * claims reconcile-money makes of them, so both read the same things the same way), and:
 * - moved / not moved: completes with the settlement, which is the record reconciliation and the
 *   outcome_unknown_unsettled gauge read (temporal/settlements.ts);
 * - still processing at the provider: fails OutcomeUnknown, nothing recorded; settle again later;
 * - nothing the spec lets us ask (issueCard without its card, a KYC submission): the operator's
 *   word (`found`), checked at the provider by hand, is recorded as given.
 * It reads only, on reconciliation's budget; it never moves money.
 */
import { FailureType } from '../shared/failures';
import { silenceProvesNothing } from '../shared/open-items';
import { literal } from '../shared/reconciliation';
import { phaseOf } from '../shared/statuses';
import type { MoneyClaim, ProviderSide } from '../shared/reconcile-checks';
import { SETTLEMENT_VERDICTS, settleInputErrors, type SettleInput, type Settlement, type SettlementVerdict } from '../shared/settlement';
import { describeErrors, hasErrors } from '../shared/card-rules';
import { failWith, providerCalls } from './lib/provider';
import { providerSide } from './reconciliation/reconcile-money';
import { mainQueue, temporalSide } from './reconciliation/run';
import { declareVersioning } from './lib/versioning';

/** The ends a settlement is about: every close but a completion. */
const UNFINISHED = ['Failed', 'Terminated', 'TimedOut', 'Canceled'];

export async function settleOutcome(input: SettleInput): Promise<Settlement> {
  const errors = settleInputErrors(input);
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid settlement: ${describeErrors(errors)}`, [{ errors }]);
  const claims = await claimsOf(input.workflowId);
  const reads = providerCalls('reconcile');
  const asked = await Promise.all(claims.map(async (claim) => ({ claim, side: await providerSide(reads, claim) })));
  const found = verdictOf(asked);
  if (found === 'processing') {
    failWith(FailureType.OutcomeUnknown, `${input.workflowId}: the provider is still processing it (${describeAsked(asked)}); nothing recorded, settle again later`, [
      { workflowId: input.workflowId, mayHaveTakenEffect: true, asked: asked.map(record) },
    ]);
  }
  const verdict = found ?? input.found;
  if (verdict === undefined) {
    failWith(
      FailureType.ValidationFailed,
      `${input.workflowId}: the spec offers no lookup of what this flow may have moved (an issueCard that recorded no card, a KYC submission, a recharge the provider keeps no record of under a key it does not honour); check at the provider and settle with found = moved or not-moved`,
      [{ errors: { found: `is required for this flow: one of ${SETTLEMENT_VERDICTS.join(', ')}` } }],
    );
  }
  if (found !== undefined && input.found !== undefined && input.found !== found) {
    failWith(FailureType.ValidationFailed, `${input.workflowId}: found says ${input.found}, the provider says ${found} (${describeAsked(asked)}); nothing recorded`, [
      { errors: { found: `contradicts the provider, which says ${found}` } },
    ]);
  }
  return {
    workflowId: input.workflowId,
    flowKind: claims[0]?.flowKind ?? input.flowKind ?? 'unknown',
    verdict,
    asked: asked.map(record),
    settledAt: new Date(Date.now()).toISOString(),
    by: found === undefined ? 'operator' : 'provider',
    ...(input.note === undefined ? {} : { note: input.note }),
  };
}

/** What the runs of the flow that did not complete claim (reconcile-money's claims), every page of them. */
async function claimsOf(workflowId: string): Promise<MoneyClaim[]> {
  const query = `WorkflowId = ${literal(workflowId)} AND TaskQueue = ${literal(mainQueue())} AND ExecutionStatus IN (${UNFINISHED.map(literal).join(', ')})`;
  const claims: MoneyClaim[] = [];
  let pageToken: string | undefined;
  let listed = 0;
  do {
    const page = await temporalSide.moneyClaimsPage({ query, pageSize: 100, ...(pageToken ? { pageToken } : {}) });
    claims.push(...page.items);
    listed += page.listed;
    pageToken = page.nextPageToken ?? undefined;
  } while (pageToken);
  if (listed === 0) failWith(FailureType.NotFound, `no run of ${workflowId} on ${mainQueue()} ended without completing: nothing to settle`, [{ workflowId }]);
  return claims;
}

/** Moved when any answer says it succeeded; processing while any is pending; not moved when every one says failed or none; undefined: nothing to ask. */
function verdictOf(all: Array<{ claim: MoneyClaim; side: ProviderSide }>): SettlementVerdict | undefined {
  // The spec gives POST /esim/recharge no idempotency key: no record under ours proves nothing, only a record or the operator's word does.
  const asked = all.filter(({ claim, side }) => side.known || !silenceProvesNothing(claim.flowKind));
  if (asked.length === 0) return undefined;
  const phases = asked.map(({ claim, side }) => (side.known ? phaseOf(claim.resource, side.status) : 'unknown'));
  if (phases.includes('succeeded')) return 'moved';
  if (phases.includes('pending')) return 'processing';
  return 'not-moved';
}

function record({ claim, side }: { claim: MoneyClaim; side: ProviderSide }): Settlement['asked'][number] {
  return {
    resource: claim.resource,
    ref: side.ref ?? claim.ref,
    known: side.known,
    ...(side.status === undefined ? {} : { status: side.status }),
    ...(side.amount === undefined ? {} : { amount: side.amount }),
  };
}

function describeAsked(asked: Array<{ claim: MoneyClaim; side: ProviderSide }>): string {
  return asked.map((a) => `${a.claim.resource} ${a.side.ref ?? a.claim.ref}: ${a.side.known ? a.side.status : 'no record'}`).join('; ');
}

// docs/versioning.md: an operator's settlement (seconds): it finishes on the build that started it.
declareVersioning('PINNED', settleOutcome);
