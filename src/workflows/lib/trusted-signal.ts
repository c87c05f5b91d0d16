/**
 * A signal handler that takes the provider's word and our own bookkeeping only from the bridge and
 * the workers: a signal whose payload was not encrypted with a key of ours (shared/refused-payload.ts),
 * or carries no MAC under the key only they hold (shared/signal-origin.ts), is dropped, logged and
 * counted, and otherwise as if it never came. One wrapper for every such signal: `providerEvent`,
 * `entityObserved`, `entityState`, `cardRead`, `cardMoneyMoved`. A `subscribe` asks for news rather
 * than giving any, and services send it (the client's subscribeToEsim): encryptedSignal.
 */
import { ApplicationFailure, log, metricMeter, patched } from '@temporalio/workflow';
import { isRefusedPayload } from '../../shared/refused-payload';
import { isOurs } from '../../shared/signal-origin';

/**
 * docs/versioning.md: signals need the bridge's or a worker's MAC (issue 50). Asked only of a signal
 * without one, so a run recorded before keeps applying what it applied then; from the marker on, it drops them.
 */
export const SIGNALS_NEED_OUR_MAC_PATCH = 'signals-need-our-mac';
export const DROPPED_SIGNAL_METRIC = 'card_issuing_untrusted_signals_dropped';

export function trustedSignal<A>(name: string, handler: (arg: A) => void): (arg: A) => void {
  return (arg: A) => {
    if (isRefusedPayload(arg)) return drop(name, 'not encrypted with our payload key');
    if (!isOurs(arg) && patched(SIGNALS_NEED_OUR_MAC_PATCH)) return drop(name, "without the bridge's or a worker's MAC");
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
 * An entity workflow started with a refused input (a stranger's plain start of `card/<id>`) fails at
 * once, so it holds the ID for no one: the bridge's next signal-with-start begins the real one.
 */
export function refuseUntrustedStart(input: unknown): void {
  if (!isRefusedPayload(input)) return;
  throw ApplicationFailure.create({ type: 'ValidationFailed', message: 'the start input was not encrypted with our payload key: refused', nonRetryable: true, details: [{ errors: { input: 'must be encrypted with our payload key' } }] });
}
