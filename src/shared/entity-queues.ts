/**
 * The entity workflows' task queue beside the main one. Apart from task-queues.ts (which re-exports
 * it) because that module checks its rate classes against the activities' types: the client package
 * (src/client) needs only these names, and must not compile the activities into its build.
 */
const ENTITY_QUEUE_SUFFIX = '-entities';

/**
 * Entity workflows (`card/…`, `kyc-cardholder/…`, …) run on a queue of their own beside the
 * main one, whose worker caches few workflows: they spend their lives waiting for events, and an
 * evicted one replays its short history when the next arrives (docs/performance.md, P4).
 */
export function entityQueue(mainQueue: string): string {
  return `${mainQueue}${ENTITY_QUEUE_SUFFIX}`;
}

/** The main queue of a workflow on either queue: its provider calls' rate queues hang off it. */
export function mainQueueOf(taskQueue: string): string {
  return taskQueue.endsWith(ENTITY_QUEUE_SUFFIX) ? taskQueue.slice(0, -ENTITY_QUEUE_SUFFIX.length) : taskQueue;
}
