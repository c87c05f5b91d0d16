/**
 * Provider calls run on rate-limited task queues, so that the whole fleet of workers stays under
 * the provider's limits (docs/rate-budget.md). The provider counts per endpoint: an endpoint busy
 * enough to need its whole window has a queue of its own (its activity is named below); every
 * other call shares the queue of its rate class, whose rate is one endpoint's budget for all of them.
 */
export type RateClass = 'general' | 'sensitive' | 'funding' | 'withdrawal';

/** A rate-limited queue: a rate class, or one hot endpoint's own. */
export type RateQueue = RateClass | 'card-create' | 'card-read';

export const RATE_QUEUES: readonly RateQueue[] = ['general', 'sensitive', 'funding', 'withdrawal', 'card-create', 'card-read'];

/** Provider limit per window of the endpoint(s) behind each queue (funding and withdrawal count separately). */
export const RATE_QUEUE_LIMITS: Record<RateQueue, number> = {
  general: 100,
  sensitive: 70,
  funding: 70,
  withdrawal: 70,
  'card-create': 100,
  'card-read': 100,
};

/**
 * Activities that call exactly one hot endpoint and get that endpoint's whole budget:
 * createCard → POST /cards, getCard → GET /cards/{cardId} (issuing and its status polls).
 */
export const DEDICATED_QUEUES: ReadonlyMap<string, RateQueue> = new Map<string, RateQueue>([
  ['createCard', 'card-create'],
  ['getCard', 'card-read'],
]);

/** The queue an activity runs on when a workflow calls it through its rate class. */
export function rateQueueFor(rateClass: RateClass, activityName: string): RateQueue {
  return (rateClass === 'general' && DEDICATED_QUEUES.get(activityName)) || rateClass;
}

export function rateClassQueue(mainQueue: string, queue: RateQueue): string {
  return `${mainQueue}-provider-${queue}`;
}
