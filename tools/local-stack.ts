/**
 * The local stack, in one place: a Temporal dev server (or the server the configuration names),
 * the codec endpoint, the provider sandbox, the webhook bridge and the workers, started in this
 * process and stopped in reverse order. `npm run demo`, the test suite (test/helpers/stack.ts)
 * and the bench (bench/stack.ts) all start it here; each asks only for the parts it needs.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startBridge, type RunningBridge } from '../src/bridge';
import { startCodecServer, type CodecServer } from '../src/codec/codec-server';
import { createDataConverter, createPayloadCodec } from '../src/codec/payload-codec';
import type { Config } from '../src/config';
import { startSandbox, type RunningSandbox } from '../src/sandbox';
import { SandboxControlClient, type SandboxConfigPatch } from '../src/sandbox/control-client';
import { connectionOptions } from '../src/temporal/connection';
import { createWorkers, type WorkerFleet, type WorkerSetup } from '../src/temporal/workers';
import { preferredPort, startDevServer, type DevServer, type DevServerOptions } from './dev-server';
import { ensureTemporalCli } from './temporal-cli';
import { freePort } from '../src/ports';

/** The Temporal UI's usual port (`npm run temporal`). */
const UI_PORT = 8233;

export interface LocalStackOptions {
  /** The configuration to start from; the stack points it at the server and the sandbox it starts. */
  base: Config;
  /** Start a dev server (in memory unless `dbFile`) with these options; omitted: use the server `base` names. */
  devServer?: Omit<DevServerOptions, 'cliPath'>;
  /** `default`: each part on its configured port when free, a free one otherwise (the demo); `free` (default): free ones. */
  ports?: 'default' | 'free';
  /** Start the codec endpoint too, and give the dev server's UI its address. */
  codecEndpoint?: boolean;
  /** Start the webhook bridge in this process and send the sandbox's webhooks to it (default true). */
  bridge?: boolean;
  /** Run the workers in this process with these settings (default {}); false: none. */
  workers?: false | Omit<WorkerSetup, 'config'>;
  /** Merged into the sandbox's configuration at start. */
  sandboxConfig?: SandboxConfigPatch;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface LocalStack {
  /** `base`, pointed at this stack's Temporal server and sandbox. */
  config: Config;
  server?: DevServer;
  codec?: CodecServer;
  sandbox: RunningSandbox;
  control: SandboxControlClient;
  bridge?: RunningBridge;
  /** A Temporal client with our payload codec. */
  client: Client;
  startWorkers(): Promise<WorkerFleet>;
  stopWorkers(): Promise<void>;
  /** `name address` of every part that listens. */
  addresses: string[];
  /** Stops what was started, in reverse order. */
  close(): Promise<void>;
}

/** Starts the parts asked for; when one fails, stops the ones already started and throws. */
export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  const stoppers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const stop of stoppers.splice(0).reverse()) await stop().catch((err: unknown) => opts.log?.(`while stopping: ${(err as Error).message}`));
  };
  try {
    return await start(opts, stoppers, close);
  } catch (err) {
    await close();
    throw err;
  }
}

async function start(opts: LocalStackOptions, stoppers: Array<() => Promise<unknown>>, close: () => Promise<void>): Promise<LocalStack> {
  const { base } = opts;
  const log = opts.log ?? (() => undefined);
  /** 0 lets the part pick a free port itself. */
  const port = (configured: number) => (opts.ports === 'default' ? preferredPort(configured) : Promise.resolve(0));
  const addresses: string[] = [];

  // The UI's port is chosen first: the codec endpoint lets that origin call it.
  const uiPort = opts.devServer && !opts.devServer.headless ? opts.devServer.uiPort || (await portOr(UI_PORT, opts.ports)) : undefined;
  let codec: CodecServer | undefined;
  if (opts.codecEndpoint) {
    const allowedOrigins = uiPort === undefined ? undefined : [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`];
    codec = await startCodecServer({ port: await port(base.codec.serverPort), codec: createPayloadCodec(base.codec), allowedOrigins });
    stoppers.push(() => codec!.close());
    addresses.push(`codec ${codec.url}`);
    log(`codec endpoint on ${codec.url}`);
  }

  let server: DevServer | undefined;
  let temporal = base.temporal;
  if (opts.devServer) {
    const cliPath = await ensureTemporalCli(base.temporal.cliPath, log);
    const temporalPort = opts.devServer.port ?? (await port(Number(base.temporal.address.split(':')[1]) || 7233));
    log(`starting a Temporal dev server${opts.devServer.dbFile ? '' : ' (in memory)'} ...`);
    server = await startDevServer({ namespace: base.temporal.namespace, codecEndpoint: codec?.url, ...opts.devServer, cliPath, port: temporalPort, uiPort });
    stoppers.push(() => server!.stop());
    // Our own server, whatever the environment points at: no TLS, no API key.
    temporal = { ...base.temporal, address: server.address, tls: false, tlsCertPath: undefined, tlsKeyPath: undefined, apiKey: undefined };
    addresses.push(`Temporal ${server.address}`, ...(server.uiUrl ? [`UI ${server.uiUrl}`] : []));
    log(`Temporal on ${server.address}${server.uiUrl ? `, UI at ${server.uiUrl}` : ''}`);
  }

  const { apiKey, apiSecret, webhookSecret } = base.provider;
  const sandbox = await startSandbox({ port: await port(base.sandbox.port), apiKey, apiSecret, webhookSecret });
  stoppers.push(() => sandbox.close());
  addresses.push(`sandbox ${sandbox.url}`);
  const control = new SandboxControlClient(sandbox.url);
  const config: Config = { ...base, temporal, provider: { ...base.provider, baseUrl: sandbox.url } };

  let bridge: RunningBridge | undefined;
  if (opts.bridge !== false) {
    bridge = await startBridge(config, { port: await port(base.bridge.port) });
    stoppers.push(() => bridge!.close());
    addresses.push(`bridge ${bridge.url}`);
  }
  // The sandbox delivers to the bridge's actual port, which may not be the configured one.
  const webhookUrl = bridge ? { webhookUrl: `${bridge.url}/webhooks/provider` } : {};
  await control.configure({ ...webhookUrl, ...opts.sandboxConfig });
  log(`provider sandbox on ${sandbox.url}${bridge ? `, bridge on ${bridge.url}/webhooks/provider` : ''}`);

  const connection = await Connection.connect(connectionOptions(config.temporal));
  stoppers.push(() => connection.close());
  const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec) });

  let fleet: WorkerFleet | undefined;
  let running: Promise<void> | undefined;
  const stopWorkers = async () => {
    fleet?.shutdown();
    await running?.catch(() => undefined);
    fleet = undefined;
    running = undefined;
  };
  const workerSetup = opts.workers;
  const startWorkers = async () => {
    if (workerSetup === false) throw new Error('this local stack runs no workers');
    quietWorkerRuntime();
    fleet = await createWorkers({ ...workerSetup, config });
    running = fleet.run();
    return fleet;
  };
  if (workerSetup !== false) {
    log(`starting the workers${workerSetup?.workflowBundlePath ? '' : ' (bundling the workflows)'} ...`);
    stoppers.push(stopWorkers);
    await startWorkers();
  }
  return { config, server, codec, sandbox, control, bridge, client, startWorkers, stopWorkers, addresses, close };
}

/** The configured port when asked for and free, otherwise a free one. */
function portOr(configured: number, ports: LocalStackOptions['ports']): Promise<number> {
  return ports === 'default' ? preferredPort(configured) : freePort();
}

let runtimeInstalled = false;

/** Workers log their state changes at INFO: in-process workers keep errors only. Once per process. */
export function quietWorkerRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // installed earlier in this process (an earlier test file, or a caller of its own)
  }
}
