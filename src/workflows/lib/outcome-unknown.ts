/**
 * A flow that ends not knowing whether the provider acted (OutcomeUnknown, SubmissionOutcomeUnknown)
 * marks itself `ProviderStatus = OUTCOME_UNKNOWN` as it fails (issue 29), so that visibility finds
 * it until an operator settles it (temporal/settlements.ts: the unsettled gauge, `starter settle`).
 *
 * One wrapper around the whole workflow function, not a line at each place that fails so: every
 * path to such a failure, today's and tomorrow's, is marked, and nothing else is.
 */
import { ActivityFailure, ApplicationFailure, CancellationScope, ChildWorkflowFailure, isCancellation, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { openItem } from './open-items';
import { itemOf } from './open-item-of';
import { PROVIDER_STATUS } from '../../shared/search-attributes';
import { isUnknownOutcomeType } from '../../shared/outcome-unknown';
import { OPEN_ITEM_STATUS } from '../../shared/open-items';
import type { DeclaresVersioning } from './versioning';

/**
 * The workflow `flow`, marking itself OUTCOME_UNKNOWN when it fails with an unknown outcome, its
 * failure rethrown unchanged. Temporal registers a workflow under its export's name, not the
 * function's; the function keeps `flow`'s name all the same, for whoever starts it by reference.
 */
export function markingUnknownOutcome<A extends unknown[], R>(flow: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  const marked = async (...args: A): Promise<R> => {
    try {
      return await flow(...args);
    } catch (err) {
      await openItemIfUnsure(err, applicationFailureOf(err), args[0] as Record<string, unknown> | undefined);
      throw err;
    }
  };
  // The flow's declarations (its versioning behaviour: lib/versioning.ts) are the registered function's.
  const { versioningBehaviour, workflowDefinitionOptions } = flow as DeclaresVersioning;
  return Object.assign(Object.defineProperty(marked, 'name', { value: flow.name }), { versioningBehaviour, workflowDefinitionOptions });
}

/**
 * docs/idempotency.md "Open items": a run that ends not knowing what moved opens its item before it
 * fails (OutcomeUnknown, SubmissionOutcomeUnknown, or any failure whose details say mayHaveTakenEffect), and so does a money flow cancelled by its caller
 * (the provider may still be working on what it sent; the item asks, and closes at once when nothing
 * was sent).
 */
async function openItemIfUnsure(err: unknown, failure: ApplicationFailure | undefined, input: Record<string, unknown> | undefined): Promise<boolean> {
  const { workflowType, workflowId, runId } = workflowInfo();
  const cancelled = isCancellation(err) && CANCELLED_MAY_HAVE_MOVED.includes(workflowType);
  // Every failure after a possible effect says so (mayHaveTakenEffect: a deadline with the card CREATING, the order PAID, the payout PENDING).
  const unsure = isUnknownOutcomeType(failure?.type) || (failure?.details ?? []).some((d) => (d as { mayHaveTakenEffect?: unknown } | null)?.mayHaveTakenEffect === true);
  if (!unsure && !cancelled) return false;
  const item = itemOf({ flowKind: workflowType, owner: { workflowId, runId }, input, details: failure?.details ?? [], reason: cancelled ? 'Canceled' : failure!.type!, keyScope: workflowId });
  // Its item is now what pages and what is settled: the flow says where to look.
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: OPEN_ITEM_STATUS }]);
  await CancellationScope.nonCancellable(() => openItem(item));
  return true;
}

/** The flows whose cancellation may leave the provider working on what they sent (not an onboarding waiting days for its review). */
const CANCELLED_MAY_HAVE_MOVED = ['issueCard', 'fundCard', 'withdrawFromCard', 'purchaseEsim', 'rechargeEsim', 'sendPayout'];

/** The ApplicationFailure a workflow fails with: the failure itself, or what an activity or child workflow failed with. */
function applicationFailureOf(err: unknown): ApplicationFailure | undefined {
  let failure = err;
  while (failure instanceof ActivityFailure || failure instanceof ChildWorkflowFailure) failure = failure.cause;
  return failure instanceof ApplicationFailure ? failure : undefined;
}
