/**
 * The provider sandbox, started in-process: tests and the demo call startSandbox(); the
 * foreground command is server.ts. Each call has its own state.
 */
import type { AddressInfo } from 'node:net';
import { buildSandboxApp } from './app';
import { Sandbox } from './sandbox';

export interface StartSandboxOptions {
  /** 0 picks a free port. Default 4010. */
  port?: number;
  host?: string;
  apiKey?: string;
  apiSecret?: string;
  /** Defaults to the API secret. */
  webhookSecret?: string;
  webhookUrl?: string;
}

export interface RunningSandbox {
  /** e.g. http://127.0.0.1:4010 (the API lives under /open-api/v1, the control API under /sandbox). */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startSandbox(opts: StartSandboxOptions = {}): Promise<RunningSandbox> {
  const apiSecret = opts.apiSecret ?? 'secret_sandbox';
  const sandbox = new Sandbox({
    apiKey: opts.apiKey ?? 'key_sandbox',
    apiSecret,
    webhookSecret: opts.webhookSecret ?? apiSecret,
    webhookUrl: opts.webhookUrl ?? 'http://127.0.0.1:4020/webhooks/provider',
  });
  const app = buildSandboxApp(sandbox);
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ port: opts.port ?? 4010, host });
  const port = (app.server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  sandbox.baseUrl = `http://${urlHost}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url: sandbox.baseUrl,
    port,
    close: () =>
      (closing ??= (async () => {
        // Release held (hung) answers and pending timers first, then the sockets.
        await sandbox.close();
        await app.close();
      })()),
  };
}

export { buildSandboxApp } from './app';
export { Sandbox } from './sandbox';
export type { SandboxConfig } from './config';
