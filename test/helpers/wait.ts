/** Polls a check until it holds (errors count as "not yet"), or fails after the timeout. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 60_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The sandbox's webhook delivery log as a list. */
export async function deliveries(control: (m: string, p: string) => Promise<any>): Promise<Array<{ eventId: string; eventType: string; delivered: boolean }>> {
  const log = await control('GET', '/webhooks');
  return Array.isArray(log) ? log : (log.deliveries ?? log.webhooks ?? []);
}
