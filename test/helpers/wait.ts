/** Polls a check until it holds (errors count as "not yet"), or fails after the timeout. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 60_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
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
