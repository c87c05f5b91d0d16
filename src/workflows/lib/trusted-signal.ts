/**
 * A signal handler that takes the provider's word and our own bookkeeping only from the bridge and
 * the workers: a signal whose payload was not encrypted with a key of ours (shared/refused-payload.ts),
 * or carries no MAC under the key only they hold (shared/signal-origin.ts), is dropped, logged and
 * counted, and otherwise as if it never came. One wrapper for every such signal: `providerEvent`,
 * `entityObserved`, `entityState`, `cardRead`, `cardMoneyMoved`. A `subscribe` asks for news rather
 * than giving any, and services send it (the client's subscribeToEsim): encryptedSignal.
 */
import { ApplicationFailure, log, metricMeter, workflowInfo } from '@temporalio/workflow';
import { isRefusedPayload } from '../../shared/refused-payload';
import { isAddressedTo, isOurs } from '../../shared/signal-origin';

export const DROPPED_SIGNAL_METRIC = 'card_issuing_untrusted_signals_dropped';

export function trustedSignal<A>(name: string, handler: (arg: A) => void): (arg: A) => void {
  return (arg: A) => {
    if (isRefusedPayload(arg)) return drop(name, 'not encrypted with our payload key');
    // Issue 50: a MAC'd payload copied from another workflow's history, or a worker's query answer sent as a signal, is not its word.
    if (!isOurs(arg)) return drop(name, "without the bridge's or a worker's MAC");
    if (!isAddressedTo(arg, workflowInfo().workflowId)) return drop(name, 'addressed to another workflow');
    handler(arg);
  };
}

/** A signal any holder of our payload key may send: only a plain (unencrypted) one is dropped. */
export function encryptedSignal<A>(name: string, handler: (arg: A) => void): (arg: A) => void {
  return (arg: A) => (isRefusedPayload(arg) ? drop(name, 'not encrypted with our payload key') : handler(arg));
}

function drop(signal: string, why: string): void {
  log.warn(`a signal ${why} was dropped`, { signal });
  // The SDK adds the workflowType, taskQueue and namespace labels itself.
  metricMeter.createCounter(DROPPED_SIGNAL_METRIC, 'signals', "Signals dropped because they did not come from the bridge or a worker (no payload encryption or no MAC)").add(1, { signal });
}

/**
 * An entity workflow's start input, as far as it may be believed (issue 50): a run continued as new
 * carries its state (only a run of ours continues as new), a run the bridge started carries our MAC;
 * any other start (a service's update-with-start, a stranger's start) names its entity and nothing
 * more, so a forged snapshot (a payout already FAILED, a card's spent nonces forgotten) is not taken.
 */
export function trustedStart<I extends object>(input: I, naming: ReadonlyArray<keyof I>): I {
  refuseUntrustedStart(input);
  if (workflowInfo().continuedFromExecutionRunId !== undefined || isOurs(input)) return input;
  return Object.fromEntries(Object.entries(input).filter(([field]) => naming.includes(field as keyof I))) as I;
}

/**
 * An entity workflow started with a refused input (a stranger's plain start of `card/<id>`) fails at
 * once, so it holds the ID for no one: the bridge's next signal-with-start begins the real one.
 */
export function refuseUntrustedStart(input: unknown): void {
  if (!isRefusedPayload(input)) return;
  throw ApplicationFailure.create({ type: 'ValidationFailed', message: 'the start input was not encrypted with our payload key: refused', nonRetryable: true, details: [{ errors: { input: 'must be encrypted with our payload key' } }] });
}
