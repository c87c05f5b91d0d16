/**
 * The local stack, in one place: a Temporal dev server (or the server the configuration names),
 * the codec endpoint, the provider sandbox, the webhook bridge and the workers, started in this
 * process and stopped in reverse order. `npm run demo`, the test suite (test/helpers/stack.ts)
 * and the bench (bench/stack.ts) all start it here; each asks only for the parts it needs.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { startBridge, type RunningBridge } from '../src/bridge';
import { startCodecServer, type CodecServer } from '../src/codec/codec-server';
import { createCodecAuthorizer } from '../src/codec/codec-auth';
import { createLogger, type Logger } from '../src/logging';
import { createDataConverter, createPayloadCodec } from '../src/codec/payload-codec';
import type { Config } from '../src/config';
import { startSandbox, type RunningSandbox } from '../src/sandbox';
import { SandboxControlClient, type SandboxConfigPatch } from '../src/sandbox/control-client';
import { clientConnectionOptions } from '../src/temporal/connection';
import { createWorkers, type WorkerFleet, type WorkerSetup } from '../src/fleet/workers';
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
  /** A Temporal client with our payload codec: what a service holds. */
  client: Client;
  /** A Temporal client with the signal MAC as well: what the bridge and the workers hold. */
  signaller: Client;
  startWorkers(): Promise<WorkerFleet>;
  stopWorkers(): Promise<void>;
  /** `name address` of every part that listens. */
  addresses: string[];
  /** Stops what was started, in reverse order. */
  close(): Promise<void>;
}

/** Starts the parts asked for; when one fails, stops the ones already started and throws. */
export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  const stoppers: Stoppers = [];
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

type Stoppers = Array<() => Promise<unknown>>;

async function start(opts: LocalStackOptions, stoppers: Stoppers, close: () => Promise<void>): Promise<LocalStack> {
  const { base } = opts;
  const log = opts.log ?? (() => undefined);
  const { codec, server, temporal, addresses } = await startTemporal(opts, stoppers, log);

  const { apiKey, apiSecret, webhookSecret } = base.provider;
  const sandbox = await startSandbox({ port: await configuredPort(base.sandbox.port, opts.ports), apiKey, apiSecret, webhookSecret });
  stoppers.push(() => sandbox.close());
  addresses.push(`sandbox ${sandbox.url}`);
  const control = new SandboxControlClient(sandbox.url);
  const config: Config = { ...base, temporal, provider: { ...base.provider, baseUrl: sandbox.url } };

  let bridge: RunningBridge | undefined;
  if (opts.bridge !== false) {
    bridge = await startBridge(config, { port: await configuredPort(base.bridge.port, opts.ports) });
    stoppers.push(() => bridge!.close());
    addresses.push(`bridge ${bridge.url}`);
  }
  // The sandbox delivers to the bridge's actual port, which may not be the configured one.
  await control.configure({ ...(bridge ? { webhookUrl: `${bridge.url}/webhooks/provider` } : {}), ...opts.sandboxConfig });
  log(`provider sandbox on ${sandbox.url}${bridge ? `, bridge on ${bridge.url}/webhooks/provider` : ''}`);

  const connection = await Connection.connect(clientConnectionOptions(config.temporal));
  stoppers.push(() => connection.close());
  const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec) });
  // What the bridge and the workers send with: payloads with the signal MAC (tests stand in for the provider's word with it).
  const signaller = new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(config.codec, { signalMac: config.signalMac }) });
  const workers = inProcessWorkers(config, opts.workers);
  if (opts.workers !== false) {
    log(`starting the workers${opts.workers?.workflowBundlePath ? '' : ' (bundling the workflows)'} ...`);
    stoppers.push(workers.stopWorkers);
    await workers.startWorkers();
  }
  return { config, server, codec, sandbox, control, bridge, client, signaller, ...workers, addresses, close };
}

/** The codec endpoint and the dev server when asked for; `temporal` is the configuration of the server to use. */
async function startTemporal(opts: LocalStackOptions, stoppers: Stoppers, log: (line: string) => void) {
  const { base, devServer } = opts;
  const addresses: string[] = [];
  // The UI's port is chosen first: the codec endpoint lets that origin call it.
  const uiPort = devServer && !devServer.headless ? devServer.uiPort || (await portOr(UI_PORT, opts.ports)) : undefined;
  let codec: CodecServer | undefined;
  if (opts.codecEndpoint) {
    const allowedOrigins = uiPort === undefined ? undefined : [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`];
    codec = await startCodecServer({ port: await configuredPort(base.codec.serverPort, opts.ports), codec: createPayloadCodec(base.codec), allowedOrigins, auth: createCodecAuthorizer(base.codec.auth), logger: codecLogger(base) });
    stoppers.push(() => codec!.close());
    addresses.push(`codec ${codec.url}`);
    log(`codec endpoint on ${codec.url}`);
  }
  if (!devServer) return { codec, server: undefined, temporal: base.temporal, addresses };

  const cliPath = await ensureTemporalCli(base.temporal.cliPath, log);
  const port = devServer.port ?? (await configuredPort(Number(base.temporal.address.split(':')[1]) || 7233, opts.ports));
  log(`starting a Temporal dev server${devServer.dbFile ? '' : ' (in memory)'} ...`);
  const server = await startDevServer({ namespace: base.temporal.namespace, codecEndpoint: codec?.url, ...devServer, cliPath, port, uiPort });
  stoppers.push(() => server.stop());
  addresses.push(`Temporal ${server.address}`, ...(server.uiUrl ? [`UI ${server.uiUrl}`] : []));
  log(`Temporal on ${server.address}${server.uiUrl ? `, UI at ${server.uiUrl}` : ''}`);
  // Our own server, whatever the environment points at: no TLS, no API key.
  const temporal: Config['temporal'] = { ...base.temporal, address: server.address, tls: false, tlsCertPath: undefined, tlsKeyPath: undefined, apiKey: undefined };
  return { codec, server, temporal, addresses };
}

/**
 * The codec endpoint's logger, as src/codec-endpoint.ts makes it: its audit lines (one per /decode and
 * /encode) with every secret the configuration holds scrubbed, the bearer tokens included.
 */
function codecLogger(config: Pick<Config, 'logLevel' | 'provider' | 'codec'>): Logger {
  const { auth } = config.codec;
  const tokens = auth.mode === 'bearer' ? [auth.token, auth.encodeToken].filter((t): t is string => t !== undefined) : [];
  return createLogger('codec', {
    level: config.logLevel,
    secrets: [config.provider.apiSecret, config.provider.webhookSecret, config.codec.key, ...Object.values(config.codec.previousKeys ?? {}), ...tokens],
  });
}

/** Workers in this process that a test may stop and start again (a worker outage). */
function inProcessWorkers(config: Config, setup: LocalStackOptions['workers']): Pick<LocalStack, 'startWorkers' | 'stopWorkers'> {
  let fleet: WorkerFleet | undefined;
  let running: Promise<void> | undefined;
  return {
    startWorkers: async () => {
      if (setup === false) throw new Error('this local stack runs no workers');
      quietWorkerRuntime();
      fleet = await createWorkers({ ...setup, config });
      running = fleet.run();
      return fleet;
    },
    stopWorkers: async () => {
      fleet?.shutdown();
      await running?.catch(() => undefined);
      fleet = undefined;
      running = undefined;
    },
  };
}

/** `default` ports: the configured one when free, another otherwise; `free`: 0, which lets the part pick one itself. */
function configuredPort(configured: number, ports: LocalStackOptions['ports']): Promise<number> {
  return ports === 'default' ? preferredPort(configured) : Promise.resolve(0);
}

/** The configured port when asked for and free, otherwise a free one. */
function portOr(configured: number, ports: LocalStackOptions['ports']): Promise<number> {
  return ports === 'default' ? preferredPort(configured) : freePort();
}

let runtimeInstalled = false;

/** Workers log their state changes at INFO: in-process workers keep errors only, the SDK core's included. Once per process. */
export function quietWorkerRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    // The core's own lines too (forwarded, not its raw ANSI stderr): an outage test would print thousands of retry warnings.
    Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }), forward: {} } } });
  } catch {
    // installed earlier in this process (an earlier test file, or a caller of its own)
  }
}
