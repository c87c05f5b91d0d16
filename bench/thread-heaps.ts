/**
 * Every thread of this process, the workflow threads included: a full garbage collection in each,
 * and the V8 heap each one uses afterwards. Workflows run in worker threads that the main
 * thread's `gc()` does not reach; without this, P4's figures would count whatever garbage the
 * flows' activations left there. Through the inspector's NodeWorker domain, the way a debugger
 * attaches to worker threads: nothing is installed in the workflow sandbox.
 */
import { Session } from 'node:inspector/promises';

interface Attached {
  params: { sessionId: string };
}
interface Received {
  params: { sessionId: string; message: string };
}

export class ThreadHeaps {
  readonly #session = new Session();
  readonly #threads = new Set<string>();
  readonly #pending = new Map<number, (result: unknown) => void>();
  #nextId = 1;
  #enabled: Promise<unknown> | undefined;

  constructor() {
    this.#session.connect();
    this.#session.on('NodeWorker.attachedToWorker', (m: Attached) => this.#threads.add(m.params.sessionId));
    this.#session.on('NodeWorker.detachedFromWorker', (m: Attached) => this.#threads.delete(m.params.sessionId));
    this.#session.on('NodeWorker.receivedMessageFromWorker', (m: Received) => {
      const reply = JSON.parse(m.params.message) as { id?: number; result?: unknown };
      if (reply.id !== undefined) this.#pending.get(reply.id)?.(reply.result);
      this.#pending.delete(reply.id ?? -1);
    });
  }

  /** Collects garbage in every thread; answers the bytes of V8 heap used in the worker threads. */
  async collect(): Promise<number> {
    this.#enabled ??= this.#session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await this.#enabled;
    await this.#session.post('HeapProfiler.collectGarbage');
    const used = await Promise.all(
      [...this.#threads].map(async (sessionId) => {
        await this.#call(sessionId, 'HeapProfiler.collectGarbage');
        const usage = (await this.#call(sessionId, 'Runtime.getHeapUsage')) as { usedSize: number };
        return usage.usedSize;
      }),
    );
    return used.reduce((a, b) => a + b, 0);
  }

  #call(sessionId: string, method: string): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      void this.#session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method }) });
    });
  }
}
