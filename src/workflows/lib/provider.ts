/**
 * How workflows reach the provider: activity proxies on rate-limited task queues (a hot
 * endpoint's own, or its rate class's) and a loop that waits out a 429 on a durable timer, so waiting
 * for budget never spends the retry attempts meant for real failures.
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure, log, proxyActivities, sleep, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { isFailureType, type FailureTypeName } from '../../shared/failures';
import { PROVIDER_CALLS, mainQueueOf, priorityOf, rateClassQueue, rateQueueFor, type CallNameOf, type ProviderCallName, type RateClass } from '../../shared/task-queues';

const RATE_LIMIT_JITTER_MS = 1000;

const baseOptions: ActivityOptions = {
  startToCloseTimeout: '45 seconds',
  // The activity heartbeats while its call is in flight: a lost worker is noticed quickly.
  heartbeatTimeout: '5 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 12,
    // A 429 ends the attempt chain at once; the workflow waits for the reset (withRateBudget).
    nonRetryableErrorTypes: ['RateLimited'],
  },
};

/** What `providerCalls` adds to Temporal's activity options. */
export interface CallOptions extends ActivityOptions {
  /** A failure names this key, and a terminal key says only a new key can try again (underIdempotencyKey). */
  idempotencyKey?: string;
  /** Failures reach the caller as Temporal raised them, for callers that classify them themselves. */
  rawFailures?: boolean;
}

export type ProviderCalls<C extends RateClass> = Pick<Activities, CallNameOf<C>>;

/**
 * The provider calls of one rate class, each on its rate-limited queue (a hot endpoint's own,
 * shared/task-queues.ts DEDICATED_QUEUES, otherwise its class's), waiting out 429s
 * (withRateBudget) and failing the workflow with the provider failure's own type (typedFailures).
 * Only the activities of that class are there: a call on the wrong class does not compile.
 */
export function providerCalls<C extends RateClass>(rateClass: C, { idempotencyKey, rawFailures, ...overrides }: CallOptions = {}): ProviderCalls<C> {
  const options: ActivityOptions = { ...baseOptions, ...overrides, retry: { ...baseOptions.retry, ...overrides.retry } };
  const mainQueue = mainQueueOf(workflowInfo().taskQueue);
  const calls = new Map<ProviderCallName, (...args: unknown[]) => Promise<unknown>>();
  const call = (name: ProviderCallName) => {
    const priorityKey = priorityOf(rateClass, name);
    const activity = proxyActivities<Activities>({
      ...options,
      taskQueue: rateClassQueue(mainQueue, rateQueueFor(rateClass, name)),
      ...(priorityKey === undefined ? {} : { priority: { priorityKey } }),
    })[name] as (...args: unknown[]) => Promise<unknown>;
    return (...args: unknown[]) => {
      // A keyed call scheduled again after a 429 tells its activity that an earlier one may have sent the POST.
      const budgeted = () => withRateBudget((again) => activity(...(again && idempotencyKey !== undefined ? sentBefore(args) : args)));
      if (rawFailures) return budgeted();
      return idempotencyKey === undefined ? typedFailures(budgeted) : underIdempotencyKey(budgeted, idempotencyKey, options.scheduleToCloseTimeout !== undefined);
    };
  };
  const cached = (name: ProviderCallName) => calls.get(name) ?? calls.set(name, call(name)).get(name)!;
  return new Proxy({} as ProviderCalls<C>, {
    get: (_, name) => (typeof name === 'string' && name in PROVIDER_CALLS ? cached(name as ProviderCallName) : undefined),
  });
}

/**
 * Activities that spend no provider budget (Temporal signals and memos, the worker's own files), on
 * the workflow's own queue. Not Temporal's local activities: these are ordinary activities.
 */
export const unmeteredActivities = proxyActivities<Activities>({ ...baseOptions, heartbeatTimeout: undefined, startToCloseTimeout: '30 seconds' });

/**
 * The workflow, not the activity, remembers that a call under a key was scheduled: an activity
 * scheduled again (a new activity, attempt 1, no heartbeat of the earlier one) learns it from its
 * input, and reconciles before it posts (activities/idempotent-post.ts). Adding a field to an
 * activity's input changes no command, so histories replay as they were.
 */
export interface SentBefore {
  /** An earlier activity for this key was scheduled by the workflow: its POST may have reached the provider. */
  sentBefore?: boolean;
}

function sentBefore(args: unknown[]): unknown[] {
  const [first, ...rest] = args;
  return typeof first === 'object' && first !== null ? [{ ...first, sentBefore: true } satisfies SentBefore, ...rest] : args;
}

/** Calls `fn` again after each 429, no sooner than the window's reset plus jitter; `again` is true from the second call on. */
async function withRateBudget<T>(fn: (again: boolean) => Promise<T>): Promise<T> {
  for (let again = false; ; again = true) {
    try {
      return await fn(again);
    } catch (err) {
      const waitMs = rateLimitWait(err);
      if (waitMs === undefined) throw err;
      log.info('provider rate limit reached: waiting for the window to reset', { waitMs });
      await sleep(waitMs + Math.floor(Math.random() * RATE_LIMIT_JITTER_MS));
    }
  }
}

function rateLimitWait(err: unknown): number | undefined {
  const failure = applicationCause(err);
  if (failure?.type !== 'RateLimited') return undefined;
  const details = failure.details?.[0] as { resetAt?: number; retryAfterMs?: number } | undefined;
  if (details?.resetAt) return Math.max(1, details.resetAt - Date.now());
  return Math.max(1, details?.retryAfterMs ?? 1000);
}

/**
 * True when an activity whose attempts are bounded by time, not count, failed for a reason it
 * would have retried: its schedule-to-close timeout (the flow's deadline) ended it. Temporal then
 * reports the last attempt's failure, or a TimeoutFailure.
 */
export function deadlineCut(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  return err.cause instanceof TimeoutFailure || (err.cause instanceof ApplicationFailure && !err.cause.nonRetryable);
}

/** The ApplicationFailure behind an activity failure (or the failure itself). */
export function applicationCause(err: unknown): ApplicationFailure | undefined {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) return err.cause;
  if (err instanceof ApplicationFailure) return err;
  return undefined;
}

/**
 * A provider answer that could not be read (InvalidResponse) once the activity's retries were
 * spent: for a read that only saves a call (a pre-check), the flow goes on and the provider decides.
 */
export function isUnreadableAnswer(err: unknown): boolean {
  const unreadable: FailureTypeName = 'InvalidResponse';
  return applicationCause(err)?.type === unreadable;
}

/**
 * A read that follows a call that took, or may have taken, effect (a movement's polls, a payout's
 * follow) and fails for good ends OutcomeUnknown with `known` (the key, what the provider last
 * said), never with the read's own type (a 403 said InvalidSignature and mayHaveTakenEffect: false
 * while money moved).
 */
export async function readAfterEffect<T>(read: () => Promise<T>, what: string, known: Record<string, unknown>, keep: readonly FailureTypeName[] = []): Promise<T> {
  try {
    return await read();
  } catch (err) {
    const cause = applicationCause(err);
    const type = cause?.type as FailureTypeName | undefined;
    if (!cause || type === 'OutcomeUnknown' || (type !== undefined && keep.includes(type))) throw err;
    return failWith(
      'OutcomeUnknown',
      `${what} may have moved money, and reading its outcome failed (${cause.type ?? 'unknown'}: ${cause.message}); it stays an open item until the provider's final word or an operator's settlement (\`npm run starter -- open\`, \`settle <ref>\`)`,
      [{ ...known, cause: cause.type, mayHaveTakenEffect: true }],
    );
  }
}

/** Fails the workflow (or update) for good with one of the declared failure types (shared/failures.ts). */
export function failWith(type: FailureTypeName, message: string, details: unknown[] = []): never {
  throw ApplicationFailure.create({ type, message, nonRetryable: true, details });
}

/**
 * Runs a provider call and, when it fails definitively, fails the workflow (or update) with
 * the provider failure's own type and details, so callers match on `type` directly.
 */
async function typedFailures<T>(call: () => Promise<T>, rewrite?: (cause: ApplicationFailure) => { message: string; details?: unknown[] }): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const cause = applicationCause(err);
    // A type nobody declared (a bug's TypeError, once its retries are spent) is not renamed: it goes up as it came.
    if (!isFailureType(cause?.type)) throw err;
    const { message, details } = rewrite?.(cause) ?? { message: cause.message };
    failWith(cause.type, message, details ?? cause.details ?? []);
  }
}

/**
 * A call made under an idempotency key: definitive failures end the flow with their own type and
 * the key in their details; a terminal key says plainly that only a new key can try again; a call
 * whose deadline (schedule-to-close) cut its attempts ends OutcomeUnknown.
 */
function underIdempotencyKey<T>(call: () => Promise<T>, idempotencyKey: string, bounded: boolean): Promise<T> {
  const settled = async () => {
    try {
      return await call();
    } catch (err) {
      // Attempts bounded by a deadline (schedule-to-close), not a count: past it, the outcome is unknown.
      if (!bounded || !deadlineCut(err)) throw err;
      return failWith(
        'OutcomeUnknown',
        `the call under idempotency key ${idempotencyKey} could not be settled by its deadline (last failure: ${applicationCause(err)?.type ?? 'timeout'}); it may have taken effect: it stays an open item until the provider's final word or an operator's settlement (starter open; starter settle ${idempotencyKey})`,
        [{ idempotencyKey, mayHaveTakenEffect: true, lastFailure: applicationCause(err)?.type ?? 'Timeout' }],
      );
    }
  };
  return typedFailures(settled, (cause) => ({
    message:
      cause.type === 'IdempotencyKeyTerminal'
        ? `idempotency key ${idempotencyKey} belongs to an attempt that definitively failed; start again with a new key`
        : cause.message,
    details: [...(cause.details ?? []), { idempotencyKey }],
  }));
}
