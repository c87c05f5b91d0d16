/** One worker of a process fails: the others drain before the process closes its connections. */
import { runTogether } from '../../src/fleet/workers';

type State = 'RUNNING' | 'STOPPED' | 'FAILED';

function fakeWorker(events: string[], name: string) {
  let state: State = 'RUNNING';
  let stop!: () => void;
  let fail!: (err: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    stop = () => setTimeout(() => ((state = 'STOPPED'), events.push(`${name} stopped`), resolve()), 20);
    fail = (err) => ((state = 'FAILED'), events.push(`${name} failed`), reject(err));
  });
  return {
    worker: { run: () => done, shutdown: () => (events.push(`${name} shutdown`), stop()), getState: () => state },
    fail,
  };
}

describe('runTogether', () => {
  test('shuts the other workers down when one fails, and rejects with that failure only once all stopped', async () => {
    const events: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((n) => fakeWorker(events, n));
    const running = runTogether([a.worker, b.worker, c.worker] as never).catch((err: Error) => (events.push(`rejected: ${err.message}`), err));
    b.fail(new Error('poll failed: PermissionDenied'));
    const err = await running;
    expect((err as Error).message).toBe('poll failed: PermissionDenied');
    expect(events).toEqual(['b failed', 'a shutdown', 'c shutdown', 'a stopped', 'c stopped', 'rejected: poll failed: PermissionDenied']);
  });

  test('resolves once every worker stopped after a shutdown', async () => {
    const events: string[] = [];
    const workers = ['a', 'b'].map((n) => fakeWorker(events, n).worker);
    const running = runTogether(workers as never);
    workers.forEach((w) => w.shutdown());
    await expect(running).resolves.toBeUndefined();
    expect(events).toEqual(['a shutdown', 'b shutdown', 'a stopped', 'b stopped']);
  });
});
