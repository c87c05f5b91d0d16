/**
 * Every timer the sandbox starts goes through here: unref'd so it never keeps the process
 * alive, and cleared by close() so that a test run leaves nothing behind.
 */
export class Timers {
  readonly #pending = new Map<number, { cancel: () => void; onClose?: () => void }>();
  #nextId = 1;
  #closed = false;

  /** Runs fn after ms; 0 means "as soon as the current work is done" (setImmediate). Returns a cancel id. */
  after(ms: number, fn: () => void): number {
    const id = this.#nextId++;
    if (this.#closed) return id;
    const run = () => {
      this.#pending.delete(id);
      fn();
    };
    if (ms <= 0) {
      const handle = setImmediate(run);
      handle.unref();
      this.#pending.set(id, { cancel: () => clearImmediate(handle) });
    } else {
      const handle = setTimeout(run, ms);
      handle.unref();
      this.#pending.set(id, { cancel: () => clearTimeout(handle) });
    }
    return id;
  }

  cancel(id: number | undefined): void {
    if (id === undefined) return;
    this.#pending.get(id)?.cancel();
    this.#pending.delete(id);
  }

  /** Resolves after ms, or at once when the timers are closed (so awaiting handlers can finish). */
  sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const id = this.#nextId++;
      const handle = setTimeout(() => {
        this.#pending.delete(id);
        resolve();
      }, ms);
      handle.unref();
      this.#pending.set(id, { cancel: () => clearTimeout(handle), onClose: resolve });
    });
  }

  /** Cancels everything pending; sleepers are released. Used by reset and close. */
  clearAll(): void {
    for (const { cancel, onClose } of this.#pending.values()) {
      cancel();
      onClose?.();
    }
    this.#pending.clear();
  }

  close(): void {
    this.#closed = true;
    this.clearAll();
  }
}
