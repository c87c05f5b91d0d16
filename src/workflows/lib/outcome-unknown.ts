/**
 * A flow that ends not knowing whether the provider acted (OutcomeUnknown, SubmissionOutcomeUnknown)
 * marks itself `ProviderStatus = OUTCOME_UNKNOWN` as it fails (issue 29), so that visibility finds
 * it until an operator settles it (temporal/settlements.ts: the unsettled gauge, `starter settle`).
 *
 * One wrapper around the whole workflow function, not a line at each place that fails so: every
 * path to such a failure, today's and tomorrow's, is marked, and nothing else is.
 */
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, patched, upsertSearchAttributes } from '@temporalio/workflow';
import { PROVIDER_STATUS } from '../../shared/search-attributes';
import { isUnknownOutcomeType } from '../../shared/outcome-unknown';
import { OUTCOME_UNKNOWN_STATUS } from '../../shared/settlement';
import type { DeclaresVersioning } from './versioning';

/**
 * docs/versioning.md: the upsert is a new command at the end of histories that may be running (a
 * flow failing OutcomeUnknown on a new worker after it started on an old one). `patched()` is
 * called only on that failure path, so every other history holds no marker.
 */
export const OUTCOME_UNKNOWN_SEARCHABLE_PATCH = 'outcome-unknown-searchable';

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
      if (isUnknownOutcomeType(applicationFailureOf(err)?.type) && patched(OUTCOME_UNKNOWN_SEARCHABLE_PATCH)) {
        upsertSearchAttributes([{ key: PROVIDER_STATUS, value: OUTCOME_UNKNOWN_STATUS }]);
      }
      throw err;
    }
  };
  // The flow's declarations (its versioning behaviour: lib/versioning.ts) are the registered function's.
  const { versioningBehaviour, workflowDefinitionOptions } = flow as DeclaresVersioning;
  return Object.assign(Object.defineProperty(marked, 'name', { value: flow.name }), { versioningBehaviour, workflowDefinitionOptions });
}

/** The ApplicationFailure a workflow fails with: the failure itself, or what an activity or child workflow failed with. */
function applicationFailureOf(err: unknown): ApplicationFailure | undefined {
  let failure = err;
  while (failure instanceof ActivityFailure || failure instanceof ChildWorkflowFailure) failure = failure.cause;
  return failure instanceof ApplicationFailure ? failure : undefined;
}
