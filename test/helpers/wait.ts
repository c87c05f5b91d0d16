/** Polls a check until it holds (errors count as "not yet"), or fails after the timeout. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 60_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Reads until `ready` holds of what was read, or for `timeoutMs`, and returns the last read either way: the assertions that
 * follow judge it. For lists that are visibility queries, where "listed at once" means within visibility's lag.
 */
export async function readUntil<T>(read: () => Promise<T>, ready: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  let last = await read();
  const deadline = Date.now() + timeoutMs;
  while (!ready(last) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    last = await read();
  }
  return last;
}

export interface Delivery {
  eventId: string;
  eventType: string;
  status: 'PENDING' | 'DELIVERED' | 'FAILED' | 'DROPPED';
  copies: number;
  attempts: Array<{ statusCode: number | null }>;
}

/** The sandbox's webhook delivery log. */
export async function deliveries(control: (m: string, p: string) => Promise<{ deliveries: Delivery[] }>): Promise<Delivery[]> {
  return (await control('GET', '/webhooks')).deliveries;
}
