/** A tiny webhook receiver: records every delivery with its signature verdict; its answer is scriptable. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from './signer';

export interface Delivery {
  at: number;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  event: { eventId: string; eventType: string; createdAt: number; data: Record<string, unknown> };
  signatureValid: boolean;
}

export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  /** Decides the status answered to each delivery; 200 by default, 0 to never answer. */
  respond: (event: Delivery['event'], attemptNo: number) => number = () => 200;
  #server?: Server;
  url = '';
  readonly path = '/webhooks/provider?src=sandbox';

  constructor(private readonly secret: string) {}

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const event = JSON.parse(raw.toString('utf8'));
        const d: Delivery = { at: Date.now(), headers: req.headers, raw, event, signatureValid: verifyWebhook(this.secret, req.url ?? '', req.headers, raw) };
        this.deliveries.push(d);
        const attemptNo = this.deliveries.filter((x) => x.event.eventId === event.eventId).length;
        const status = this.respond(event, attemptNo);
        if (status === 0) return; // 0: hang, never answer (connections are cut at stop)
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${this.path}`;
  }

  of(eventType: string): Delivery[] {
    return this.deliveries.filter((d) => d.event.eventType === eventType);
  }

  clear(): void {
    this.deliveries.length = 0;
    this.respond = () => 200;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }
}
