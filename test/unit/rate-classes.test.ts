/** Which rate class each provider activity runs under: every provider activity has one (test/types/rate-classes.ts: the types refuse any other). */
import { createActivities, type ActivityDeps } from '../../src/activities';
import { PROVIDER_CALLS, RATE_QUEUES, rateQueueFor } from '../../src/shared/task-queues';

/** Activities that spend no provider budget: they run on the workflow's own queue. */
const UNMETERED = ['subscribeToEntity', 'earlierRunMemos', 'earlierRunRecords', 'inspectKycDocuments', 'moneyClaimsPage', 'cardViewsPage', 'flowsPage', 'whereFlowsWait', 'correctCardViews', 'recordReport', 'readReconcileBudget', 'lastReportedBins', 'openItemFor', 'verifyPayoutDecision', 'attemptOwnerState', 'reopenEndedItems', 'openUnaccountedItems', 'lastReconcileRunStart', 'targetRelease'];

describe('provider calls by rate class', () => {
  it('lists every activity that calls the provider, and only those', () => {
    // Building the activities touches none of their dependencies; only their names are read here.
    const names = Object.keys(createActivities({} as ActivityDeps)).sort();
    expect([...Object.keys(PROVIDER_CALLS), ...UNMETERED].sort()).toEqual(names);
  });

  it('puts every call on a rate-limited queue that exists', () => {
    for (const [name, classes] of Object.entries(PROVIDER_CALLS)) {
      for (const rateClass of classes) expect(RATE_QUEUES).toContain(rateQueueFor(rateClass, name));
    }
  });
});
