/**
 * The gRPC interceptors of every Temporal client Connection we open (bridge, starter, the
 * workers' client, readiness probes): the SDK's own retry interceptor, and below it a guard for
 * a retry that outlives its connection.
 *
 * Why the guard: the SDK's retry interceptor schedules the next attempt of a call that failed
 * UNAVAILABLE with a timer (up to 5 s later) and creates that attempt's call when the timer
 * fires. If the Connection was closed meanwhile, grpc-js throws "Channel has been shut down"
 * from inside that timer: an uncaught exception that takes the process down (jest reports it
 * against whatever test is running). It happens whenever a client is closed within seconds of a
 * call that failed during an outage: a bridge shut down right after a 503 (test/bridge/
 * client-close.test.ts reproduces it), a starter CLI that gives up, a test that stops its stack.
 * The guard ends such an attempt with CANCELLED instead, which the retry interceptor does not
 * retry and hands to the caller, if one still waits.
 */
import { InterceptingCall, Metadata, status, type Interceptor, type InterceptingListener } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

const CLOSED = 'Channel has been shut down';
/** grpc-js exports the interface only as the parameter of InterceptingCall. */
type CallInterface = ConstructorParameters<typeof InterceptingCall>[0];

/** Creates the attempt's call; one on a closed channel ends at once with CANCELLED. */
export const closedChannelGuard: Interceptor = (options, nextCall) => {
  try {
    return new InterceptingCall(nextCall(options));
  } catch (err) {
    if ((err as Error).message !== CLOSED) throw err;
    return new InterceptingCall(cancelledCall(`the Temporal connection was closed before a retry of ${options.method_definition.path} could start`));
  }
};

/** A call that was never sent: it reports CANCELLED to whoever starts it. */
function cancelledCall(details: string): CallInterface {
  let listener: Partial<InterceptingListener> | undefined;
  const noop = () => undefined;
  return {
    start(_metadata, l) {
      listener = l;
      setImmediate(() => {
        try {
          listener?.onReceiveStatus?.({ code: status.CANCELLED, details, metadata: new Metadata() });
        } catch {
          // The SDK's retry interceptor ends a retried attempt by passing on the first attempt's message
          // (savedMessageNext), which a first attempt that failed never set: it throws a TypeError here, an
          // uncaught exception in this timer. The call is over either way, its connection closed: nothing to hand on.
        }
      });
    },
    cancelWithStatus: noop,
    getPeer: () => '',
    sendMessageWithContext: noop,
    sendMessage: noop,
    startRead: noop,
    halfClose: noop,
    getAuthContext: () => null,
  };
}

/** The SDK's default (retry) interceptor, then the guard: the interceptors option of a client Connection. */
export function clientInterceptors(): Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), closedChannelGuard];
}
