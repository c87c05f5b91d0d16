import type { DevServer } from '../tools/dev-server';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as Record<string, unknown>).__temporalDevServer as DevServer | undefined;
  await server?.stop();
}
