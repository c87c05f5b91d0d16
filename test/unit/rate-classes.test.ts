/** Which rate class each provider activity runs under: every provider activity has one, and the types refuse any other. */
import { createActivities, type ActivityDeps } from '../../src/activities';
import type { ProviderCalls } from '../../src/workflows/lib/provider';
import { PROVIDER_CALLS, RATE_QUEUES, rateQueueFor } from '../../src/shared/task-queues';

/** Activities that spend no provider budget: they run on the workflow's own queue. */
const UNMETERED = ['subscribeToEntity', 'earlierRunMemos', 'inspectKycDocuments'];

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

  it('makes a call on the wrong rate class a type error', () => {
    const typeOnly = (sensitive: ProviderCalls<'sensitive'>, funding: ProviderCalls<'funding'>) => [
      // @ts-expect-error GET /cards/{cardId} is a general call
      sensitive.getCard,
      // @ts-expect-error revealing card details is a sensitive call
      funding.revealSensitiveCard,
      sensitive.revealSensitiveCard,
      funding.moveMoney,
    ];
    // `tsc` (part of npm test) fails if an expected error disappears; at run time nothing is called.
    expect(typeOnly).toBeInstanceOf(Function);
  });
});
