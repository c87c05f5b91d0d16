/**
 * The provider sandbox for client tests: started in-process on a free port, controlled
 * through its control client (src/sandbox/control-client.ts), plus signer wrappers that let a test
 * see (or break) what goes over the wire.
 */
import { startSandbox, type RunningSandbox } from '../../../src/sandbox';
import { SandboxControlClient } from '../../../src/sandbox/control-client';
import { ProviderClient, type ProviderClientOptions } from '../../../src/provider/client';
import { HmacSha256Scheme, type SignableRequest, type SignedHeaders, type SigningScheme } from '../../../src/provider/signing';

export const API_KEY = 'key_sandbox';
export const API_SECRET = 'secret_sandbox';

export interface SandboxHarness {
  sandbox: RunningSandbox;
  control: SandboxControlClient;
  /** A client signing with the sandbox's credentials; closed with the harness. */
  client(opts?: Partial<ProviderClientOptions>): ProviderClient;
  close(): Promise<void>;
}

export async function startHarness(): Promise<SandboxHarness> {
  const sandbox = await startSandbox({ port: 0 });
  const clients: ProviderClient[] = [];
  return {
    sandbox,
    control: new SandboxControlClient(sandbox.url),
    client(opts = {}) {
      const c = new ProviderClient({ baseUrl: sandbox.url, signer: hmac(), timeoutMs: 5000, ...opts });
      clients.push(c);
      return c;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await sandbox.close();
    },
  };
}

export function hmac(secret = API_SECRET): HmacSha256Scheme {
  return new HmacSha256Scheme({ apiKey: API_KEY, secret });
}

/** Records the nonce of every physical attempt. */
export class RecordingSigner implements SigningScheme {
  readonly nonces: string[] = [];
  constructor(private readonly inner: SigningScheme = hmac()) {}
  sign(req: SignableRequest): SignedHeaders {
    const headers = this.inner.sign(req);
    this.nonces.push(headers['x-nonce']);
    return headers;
  }
  verify: SigningScheme['verify'] = (req, headers) => this.inner.verify(req, headers);
}

/** A broken signer: replays its first signature (and so its nonce) for every later attempt. */
export class ReplayingSigner implements SigningScheme {
  #first?: SignedHeaders;
  constructor(private readonly inner: SigningScheme = hmac()) {}
  sign(req: SignableRequest): SignedHeaders {
    this.#first ??= this.inner.sign(req);
    return this.#first;
  }
  verify: SigningScheme['verify'] = (req, headers) => this.inner.verify(req, headers);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port nothing listens on: bound, then released. */
export async function closedPort(): Promise<number> {
  const net = await import('node:net');
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Issues a plain card and finishes its provisioning now. */
export async function enabledCard(client: ProviderClient, control: SandboxControlClient, initialAmount = 10_000): Promise<string> {
  const card = await client.createCard({ cardBinId: 'bin_visa_basic', initialAmount, firstName: 'Ada', lastName: 'Lovelace' });
  await control.finishProvisioning(card.cardId, 'ENABLE');
  return card.cardId;
}

/** Resolves with the rejection of a promise that must fail. */
export async function failureOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}
