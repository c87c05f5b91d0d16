/**
 * One sandbox's whole world: configuration, records, ledger, idempotency keys, rate-limit
 * counters, nonces, webhooks and statistics. No globals, so several sandboxes can run in
 * one process (tests do). Routes read the fields at call time because reset() replaces them.
 */
import { HmacSha256Scheme, NonceCache } from '../provider/signing';
import { defaultSandboxConfig, type SandboxConfig } from './config';
import { IdempotencyStore } from './idempotency';
import { Ledger } from './ledger';
import { RateLimiter } from './rate-limit';
import { SandboxState } from './state';
import { Timers } from './timers';
import { WebhookDispatcher } from './webhooks';

export interface SandboxOptions {
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
  webhookUrl: string;
  /** Injectable clock and randomness, so timing and fault decisions can be controlled. */
  now?: () => number;
  random?: () => number;
}

export interface EndpointStats {
  requests: number;
  byStatus: Record<string, number>;
}

export class Sandbox {
  readonly apiKey: string;
  readonly now: () => number;
  readonly random: () => number;
  readonly timers = new Timers();
  readonly signer: HmacSha256Scheme;
  readonly nonces: NonceCache;
  readonly webhooks: WebhookDispatcher;
  /** http://host:port once listening; presigned upload URLs and hosted KYC pages point here. */
  baseUrl = 'http://127.0.0.1';

  config: SandboxConfig;
  state = new SandboxState();
  ledger: Ledger;
  idempotency: IdempotencyStore;
  rateLimiter: RateLimiter;
  stats = new Map<string, EndpointStats>();
  /**
   * How far the control API moved the idempotency keys' clock (POST /sandbox/clock), so a test can
   * see the 24 h key cache of POST /cards expire. Signatures and nonces keep the real clock: ours must agree with it.
   */
  clockOffsetMs = 0;
  /** The idempotency store's clock: the real one, moved forward by clockOffsetMs. */
  readonly keyClock = (): number => this.now() + this.clockOffsetMs;

  constructor(private readonly opts: SandboxOptions) {
    this.apiKey = opts.apiKey;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.signer = new HmacSha256Scheme({ apiKey: opts.apiKey, secret: opts.apiSecret, now: this.now });
    this.nonces = new NonceCache(undefined, this.now);
    this.config = defaultSandboxConfig(opts.webhookUrl);
    this.ledger = new Ledger(this.now);
    this.idempotency = new IdempotencyStore(this.keyClock);
    this.rateLimiter = new RateLimiter(() => this.config.rateLimit, this.now);
    this.webhooks = new WebhookDispatcher({
      config: () => this.config,
      apiKey: opts.apiKey,
      webhookSecret: opts.webhookSecret,
      timers: this.timers,
      now: this.now,
      random: () => this.random(),
    });
  }

  /** Back to the fixtures: empty state, opening wallet, default config, nothing pending. */
  reset(): void {
    this.timers.clearAll();
    this.webhooks.reset();
    this.config = defaultSandboxConfig(this.opts.webhookUrl);
    this.state = new SandboxState();
    this.clockOffsetMs = 0;
    this.ledger = new Ledger(this.now);
    this.idempotency = new IdempotencyStore(this.keyClock);
    this.rateLimiter = new RateLimiter(() => this.config.rateLimit, this.now);
    this.stats = new Map();
  }

  recordAnswer(endpointKey: string, status: number): void {
    let s = this.stats.get(endpointKey);
    if (!s) this.stats.set(endpointKey, (s = { requests: 0, byStatus: {} }));
    s.requests++;
    s.byStatus[status] = (s.byStatus[status] ?? 0) + 1;
  }

  async close(): Promise<void> {
    this.timers.close();
    await this.webhooks.close();
  }
}
