/**
 * Provider calls run on rate-limited task queues, so that the whole fleet of workers stays under
 * the provider's limits (docs/rate-budget.md). The provider counts per endpoint: an endpoint busy
 * enough to need its whole window has a queue of its own (its activity is named below); every
 * other call shares the queue of its rate class, whose rate is one endpoint's budget for all of them.
 */
/**
 * `reconcile`: reconciliation's reads. They run on the flows' own queues for their endpoints at the
 * lowest priority (RECONCILE_PRIORITY), so a flow's call is dispatched first, and the reconciliation
 * paces itself to RECONCILE_BUDGET_SHARE of each window (docs/rate-budget.md, "Reconciliation's share").
 */
export type RateClass = 'general' | 'sensitive' | 'funding' | 'withdrawal' | 'reconcile';

/**
 * The rate classes each provider activity may run under (its endpoint's class in the spec's
 * rate-limit table): workflows reach an activity only through a class listed here, so a call
 * on the wrong class is a type error (workflows/lib/provider.ts providerCalls).
 */
export const PROVIDER_CALLS = {
  getCardBin: ['general'],
  createCard: ['general'],
  getCard: ['general'],
  changeCard: ['general'],
  applyCardChange: ['general'],
  revealSensitiveCard: ['sensitive'],
  // POST /cards/{cardId}/funding and /withdrawal (and their operation lookups) on their own budgets.
  moveMoney: ['funding', 'withdrawal'],
  getOperation: ['funding', 'withdrawal'],
  confirmOperationOwner: ['funding', 'withdrawal'],
  // Reconciliation's reads (activities/reconciliation.ts), only under its own class (its priority).
  reconcileReadCard: ['reconcile'],
  reconcileReadOperation: ['reconcile'],
  reconcileReadPayout: ['reconcile'],
  reconcileReadEsimOrder: ['reconcile'],
  reconcileRefreshBins: ['reconcile'],
  getCardholder: ['general'],
  uploadKycDocument: ['general'],
  submitKycForm: ['general'],
  submitKycManual: ['general'],
  startHostedKyc: ['general'],
  placeEsimOrder: ['general'],
  getEsimOrder: ['general'],
  getEsimUsage: ['general'],
  listEsimPlans: ['general'],
  createPayout: ['general'],
  getPayout: ['general'],
  getWalletBalance: ['general'],
  // The operator's reads (activities/operator-reads.ts): GET /card-bins (through the BIN cache) and GET /operations/{key}.
  listCardBins: ['general'],
  readOperationRecord: ['general'],
} as const satisfies Record<string, readonly RateClass[]>;

export type ProviderCallName = keyof typeof PROVIDER_CALLS;
/** The activities a workflow may call under rate class C. */
export type CallNameOf<C extends RateClass> = { [K in ProviderCallName]: C extends (typeof PROVIDER_CALLS)[K][number] ? K : never }[ProviderCallName];

/** A rate-limited queue: a rate class's (reconciliation has none of its own), or one hot endpoint's. */
export type RateQueue = Exclude<RateClass, 'reconcile'> | 'card-create' | 'card-read';

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
 * Temporal's task priority of reconciliation's reads: the lowest of the server's five levels
 * (flows' calls carry the default, 3). A queue with a backlog dispatches every flow's call before
 * any of them, so a reconciliation never delays a flow; it takes what flows leave of the window.
 */
export const RECONCILE_PRIORITY = 5;

/**
 * Temporal's task priority of a card action (freeze, unfreeze, PIN, contact, delete, reveal): above
 * the flows' default (3). The general queue also carries every KYC upload and submission, payout and
 * eSIM order; in the cluster soak it ran at 82 of its 100 calls a window on average, and a freeze
 * behind a burst of them waited out its caller's 30 s (issue 52). A card action is one call a person
 * waits for; the bulk steps of longer flows lose a slot, not their place.
 */
export const CARD_ACTION_PRIORITY = 2;
const CARD_ACTION_CALLS: ReadonlySet<string> = new Set(['applyCardChange', 'changeCard', 'revealSensitiveCard']);

/** The task priority of a call of a rate class; undefined: the server's default. */
export function priorityOf(rateClass: RateClass, activityName?: string): number | undefined {
  if (rateClass === 'reconcile') return RECONCILE_PRIORITY;
  return activityName !== undefined && CARD_ACTION_CALLS.has(activityName) ? CARD_ACTION_PRIORITY : undefined;
}

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
  if (rateClass === 'reconcile') return activityName === 'reconcileReadCard' ? 'card-read' : 'general';
  return (rateClass === 'general' && DEDICATED_QUEUES.get(activityName)) || rateClass;
}

export function rateClassQueue(mainQueue: string, queue: RateQueue): string {
  return `${mainQueue}${RATE_QUEUE_INFIX}${queue}`;
}

const RATE_QUEUE_INFIX = '-provider-';

/** The main queue a provider call's activity belongs to, from the rate queue it runs on (its workflow may be on either queue). */
export function mainQueueOfActivity(activityQueue: string): string {
  const at = activityQueue.lastIndexOf(RATE_QUEUE_INFIX);
  return mainQueueOf(at < 0 ? activityQueue : activityQueue.slice(0, at));
}

// The entity workflows' queue: its home is entity-queues.ts (the client package imports it without the activities' types).
export { entityQueue, mainQueueOf } from './entity-queues';
import { entityQueue, mainQueueOf } from './entity-queues';

/** The prefix of our Nexus service's queues (src/nexus): one per caller, `nexusCallerQueue`. */
export function nexusQueue(mainQueue: string): string {
  return `${mainQueue}-nexus`;
}

/** The queue our Nexus service `cardIssuing` is served on for one caller (NEXUS_CALLERS): that caller's endpoint's target, and its relays'. */
export function nexusCallerQueue(mainQueue: string, caller: string): string {
  return `${nexusQueue(mainQueue)}-${caller}`;
}

/** Every queue our workflows run on: the main queue, the entities' and the Nexus service's of each caller (`callers`: their names). */
export function workflowQueues(mainQueue: string, callers: readonly string[] = []): string[] {
  return [mainQueue, entityQueue(mainQueue), ...callers.map((caller) => nexusCallerQueue(mainQueue, caller))];
}

/** A Nexus caller's endpoint: `<base>-<name>` (base: `nexus-endpoint --name`, default card-issuing), routed to its queue. */
export function callerEndpointName(base: string, caller: { name: string }): string {
  return `${base}-${caller.name}`;
}
