/**
 * Webhook delivery (CONTRACTS §4): signed like a request, POSTed asynchronously so it never
 * holds up an API answer, redelivered with growing delays until a 2xx within the timeout,
 * with the fault knobs drop, duplicate, delay and reorder. Every event is logged for
 * GET /sandbox/webhooks, dropped ones included.
 */
import { Agent, request } from 'undici';
import type { WebhookEventData, WebhookEventType } from '../provider-api';
import { HmacSha256Scheme } from '../provider/signing';
import type { SandboxConfig } from './config';
import { presentEvent } from './profiles';
import { newId } from './ids';
import type { Timers } from './timers';

export interface DeliveryAttempt {
  copy: number;
  attempt: number;
  at: number;
  /** HTTP status of the answer, or null when there was none (timeout, refused). */
  statusCode: number | null;
  error?: string;
}

export interface DeliveryLog {
  eventId: string;
  eventType: string;
  createdAt: number;
  /** PENDING until a copy got a 2xx (DELIVERED) or every attempt failed (FAILED); DROPPED by the drop fault. */
  status: 'PENDING' | 'DELIVERED' | 'FAILED' | 'DROPPED';
  /** 2 when the duplicate fault sent the event twice. */
  copies: number;
  attempts: DeliveryAttempt[];
  deliveredAt?: number;
}

interface OutgoingEvent {
  eventId: string;
  eventType: string;
  createdAt: number;
  data: unknown;
}

export interface WebhookDispatcherOptions {
  config: () => SandboxConfig;
  apiKey: string;
  webhookSecret: string;
  timers: Timers;
  now: () => number;
  random: () => number;
}

export class WebhookDispatcher {
  readonly #log = new Map<string, DeliveryLog>();
  readonly #inFlight = new Set<AbortController>();
  /**
   * No cap on connections: with a pool of 16, sixteen deliveries that the receiver holds (a bridge
   * waiting up to its deadline on a slow Temporal) queued every other event behind them, their
   * 10 s timeout running while queued; a timed-out attempt then waited for its redelivery, which
   * is how single events took 19-28 s to reach a bridge that handled them in milliseconds.
   */
  readonly #agent = new Agent({ keepAliveTimeout: 1000, connections: null });
  readonly #signer: HmacSha256Scheme;
  #reorderBuffer: OutgoingEvent[] = [];
  #reorderTimer: number | undefined;
  #closed = false;
  /** Round-robin position over config.webhookUrls. */
  #nextUrl = 0;

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.#signer = new HmacSha256Scheme({ apiKey: opts.apiKey, secret: opts.webhookSecret, now: opts.now });
  }

  /** Queues an event for delivery and returns its eventId; never waits for the receiver. */
  emit<T extends WebhookEventType>(eventType: T, data: WebhookEventData<T>): string {
    const event: OutgoingEvent = { eventId: newId('evt', 20), eventType, createdAt: this.opts.now(), data };
    const { webhook } = this.opts.config();
    const entry: DeliveryLog = { eventId: event.eventId, eventType, createdAt: event.createdAt, status: 'PENDING', copies: 0, attempts: [] };
    this.#log.set(event.eventId, entry);
    if (this.opts.random() < webhook.dropRate) {
      entry.status = 'DROPPED';
      return event.eventId;
    }
    if (webhook.reorder) this.#hold(event, webhook.reorderWindowMs);
    else this.#dispatch(event);
    return event.eventId;
  }

  log(): DeliveryLog[] {
    return [...this.#log.values()].map((e) => ({ ...e, attempts: [...e.attempts] }));
  }

  /** Forgets the log and stops pending deliveries (their timers are cleared by the owner). */
  reset(): void {
    for (const c of this.#inFlight) c.abort();
    this.#inFlight.clear();
    this.#log.clear();
    this.#reorderBuffer = [];
    this.#reorderTimer = undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.reset();
    await this.#agent.destroy().catch(() => undefined);
  }

  /** Reorder fault: collect events for a short window, then send them newest first. */
  #hold(event: OutgoingEvent, windowMs: number): void {
    this.#reorderBuffer.push(event);
    if (this.#reorderTimer !== undefined) return;
    this.#reorderTimer = this.opts.timers.after(windowMs, () => {
      const batch = this.#reorderBuffer.reverse();
      this.#reorderBuffer = [];
      this.#reorderTimer = undefined;
      for (const e of batch) this.#dispatch(e);
    });
  }

  #dispatch(event: OutgoingEvent): void {
    const { webhook } = this.opts.config();
    const entry = this.#log.get(event.eventId);
    if (!entry) return;
    const copies = this.opts.random() < webhook.duplicateRate ? 2 : 1;
    entry.copies = copies;
    const presented = presentEvent(this.opts.config().profile, event);
    const body = JSON.stringify(presented.body);
    for (let copy = 1; copy <= copies; copy++) {
      // setImmediate at least, so the emitting request is never delayed by delivery.
      this.opts.timers.after(webhook.delayMs, () => void this.#attempt(event.eventId, body, presented.withApiKey, copy, 1));
    }
  }

  async #attempt(eventId: string, body: string, withApiKey: boolean, copy: number, attempt: number): Promise<void> {
    const entry = this.#log.get(eventId);
    if (!entry || this.#closed) return;
    const { webhook, webhookUrl, webhookUrls } = this.opts.config();
    const url = webhookUrls.length > 0 ? webhookUrls[this.#nextUrl++ % webhookUrls.length] : webhookUrl;
    const statusCode = await this.#post(url, body, withApiKey, webhook.timeoutMs).catch((err: Error) => err);
    if (this.#log.get(eventId) !== entry) return; // reset meanwhile
    const ok = typeof statusCode === 'number' && statusCode >= 200 && statusCode < 300;
    entry.attempts.push({
      copy,
      attempt,
      at: this.opts.now(),
      statusCode: typeof statusCode === 'number' ? statusCode : null,
      ...(typeof statusCode === 'number' ? {} : { error: statusCode.name === 'AbortError' ? 'timeout' : 'connection failed' }),
    });
    if (ok) {
      if (entry.status !== 'DELIVERED') entry.deliveredAt = this.opts.now();
      entry.status = 'DELIVERED';
      return;
    }
    if (attempt >= webhook.maxAttempts) {
      const copiesFinished = new Set(entry.attempts.filter((a) => a.attempt >= webhook.maxAttempts).map((a) => a.copy)).size;
      if (entry.status === 'PENDING' && copiesFinished >= entry.copies) entry.status = 'FAILED';
      return;
    }
    const delay = webhook.retryBaseMs * 2 ** (attempt - 1);
    this.opts.timers.after(delay, () => void this.#attempt(eventId, body, withApiKey, copy, attempt + 1));
  }

  /** One signed POST; resolves with the status code, rejects on timeout or connection error. */
  async #post(url: string, body: string, withApiKey: boolean, timeoutMs: number): Promise<number> {
    const target = new URL(url);
    const { 'x-api-key': apiKey, ...signature } = this.#signer.sign({ method: 'POST', pathWithQuery: target.pathname + target.search, body });
    const headers = withApiKey ? { ...signature, 'x-api-key': apiKey } : signature;
    const controller = new AbortController();
    this.#inFlight.add(controller);
    const timer = this.opts.timers.after(timeoutMs, () => controller.abort());
    try {
      const res = await request(target, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        dispatcher: this.#agent,
        signal: controller.signal,
      });
      await res.body.dump();
      return res.statusCode;
    } finally {
      this.opts.timers.cancel(timer);
      this.#inFlight.delete(controller);
    }
  }
}
