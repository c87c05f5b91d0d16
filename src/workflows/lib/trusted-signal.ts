/**
 * A signal handler that drops a signal whose payload was not encrypted with a key of ours
 * (shared/refused-payload.ts): logged, and otherwise as if it never came. One wrapper for every
 * signal that carries the provider's word or our own bookkeeping.
 */
import { ApplicationFailure, log } from '@temporalio/workflow';
import { isRefusedPayload } from '../../shared/refused-payload';

export function trustedSignal<A>(name: string, handler: (arg: A) => void): (arg: A) => void {
  return (arg: A) => {
    if (isRefusedPayload(arg)) {
      log.warn('a signal without our payload encryption was dropped', { signal: name });
      return;
    }
    handler(arg);
  };
}

/**
 * An entity workflow started with a refused input (a stranger's plain start of `card/<id>`) fails at
 * once, so it holds the ID for no one: the bridge's next signal-with-start begins the real one.
 */
export function refuseUntrustedStart(input: unknown): void {
  if (!isRefusedPayload(input)) return;
  throw ApplicationFailure.create({ type: 'ValidationFailed', message: 'the start input was not encrypted with our payload key: refused', nonRetryable: true, details: [{ errors: { input: 'must be encrypted with our payload key' } }] });
}
