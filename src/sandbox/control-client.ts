/**
 * The client of the sandbox's control API (CONTRACTS §5, `src/sandbox/routes/control.ts`): the one
 * way the demo, the cluster smoke, the bench and the tests steer the sandbox and read its ledger,
 * webhook log and statistics. Plain JSON over fetch, unsigned (the control API is loopback only).
 * Types only from the sandbox's modules, so a caller does not load the sandbox itself.
 */
import type { SandboxConfig } from './config';
import type { Violation } from './ledger';
import type { EndpointStats } from './sandbox';
import type { DeliveryLog } from './webhooks';

/** A partial configuration, merged in deeply by the sandbox (PUT /sandbox/config). */
export type SandboxConfigPatch = { [K in keyof SandboxConfig]?: SandboxConfig[K] extends Record<string, unknown> ? Partial<SandboxConfig[K]> : SandboxConfig[K] };

export interface SandboxLedger {
  wallet: number;
  cards: Array<{ cardId: string; availableBalance: number }>;
  totals: Record<string, number>;
  entryCount: number;
  violations: Violation[];
}

/** The control API's answer to a call it refused: `{ error: CODE, message?, errors? }`. */
export class SandboxControlError extends Error {
  readonly type = 'SandboxControlError';
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`sandbox control ${what} answered ${status}: ${JSON.stringify(body)}`);
  }
}

export type { DeliveryLog, EndpointStats, Violation };

/** One object per sandbox; `baseUrl` is the sandbox's own (the control API lives under `/sandbox`). */
export class SandboxControlClient {
  constructor(readonly baseUrl: string) {}

  /** Any control call, whatever it answers: for tests of the control API itself. */
  async request<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.baseUrl}/sandbox${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** A control call that must succeed: resolves the JSON answer, throws SandboxControlError on a non-2xx. */
  async call<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const answer = await this.request<T>(method, path, body);
    if (answer.status < 200 || answer.status > 299) throw new SandboxControlError(answer.status, answer.body, `${method} ${path}`);
    return answer.body;
  }

  health = () => this.call<{ ok: boolean }>('GET', '/health');
  /** Back to the fixtures, the default configuration and an empty ledger. */
  reset = () => this.call<{ ok: boolean }>('POST', '/reset');
  config = () => this.call<SandboxConfig>('GET', '/config');
  /** Merges `patch` into the configuration; resolves the whole new one. */
  configure = (patch: SandboxConfigPatch) => this.call<SandboxConfig>('PUT', '/config', patch);

  wallet = () => this.call<{ availableBalance: number; currency: string }>('GET', '/wallet');
  /** Credits (amount > 0) or debits (amount < 0) the wallet, in cents. */
  adjustWallet = (amount: number) => this.call<{ availableBalance: number; currency: string }>('POST', '/wallet', { amount });

  decideKyc = (id: string, kycStatus: 'APPROVED' | 'REJECTED', reason?: string) => this.call('POST', `/kyc/${id}/decision`, { kycStatus, reason });
  finishProvisioning = (cardId: string, status: 'ENABLE' | 'FAILED') => this.call('POST', `/cards/${cardId}/provisioning`, { status });
  /** A card transaction at a merchant; the sandbox sends its webhook. */
  /** Whether the card's PIN is `pin` (the sandbox never shows one). */
  pinCheck = (cardId: string, pin: string) => this.call<{ cardId: string; pinSet: boolean; matches: boolean }>('POST', `/cards/${cardId}/pin-check`, { pin });
  cardTransaction = (cardId: string, amount: number, merchantName: string) => this.call('POST', `/cards/${cardId}/transactions`, { amount, merchantName });
  expireCard = (cardId: string) => this.call('POST', `/cards/${cardId}/expire`);
  finishEsimOrder = (orderNo: string, status: 'ISSUED' | 'FAILED') => this.call('POST', `/esim/orders/${orderNo}/outcome`, { status });
  setEsimUsage = (esimNo: string, dataUsedMb: number) => this.call('POST', `/esim/esims/${esimNo}/usage`, { dataUsedMb });
  setPayoutStatus = (merOrderNo: string, status: string) => this.call('POST', `/payouts/${merOrderNo}/status`, { status });

  // What the provider may do without telling us (reconciliation's seeds, README "Sandbox control").
  /** A spend whose CARD_TRANSACTION webhook is never sent. */
  silentCardTransaction = (cardId: string, amount: number, merchantName: string) => this.call('POST', `/cards/${cardId}/transactions`, { amount, merchantName, webhook: false });
  /** The card vanishes at the provider: GET /cards/{cardId} answers 404. */
  forgetCard = (cardId: string) => this.call<{ ok: boolean }>('POST', `/cards/${cardId}/forget`);
  /** A FAILED funding or withdrawal completes after all: its money moves, GET /operations/{key} says COMPLETED. */
  completeFailedOperation = (idempotencyKey: string) => this.call('POST', `/operations/${idempotencyKey}/complete`);
  /** The payout's status changes at the provider with no webhook, whatever it was. */
  rewritePayoutStatus = (merOrderNo: string, status: string) => this.call('POST', `/payouts/${merOrderNo}/rewrite`, { status });
  /**
   * Moves the sandbox's idempotency-key clock forward by `advanceMs` (a positive integer, at most a
   * year), so a key the provider keeps for a while (POST /cards: 24 h) expires now; resolves the
   * total offset. Signatures, nonces, timers and records keep the real clock. Reset sets it back.
   */
  advanceClock = (advanceMs: number) => this.call<{ offsetMs: number }>('POST', '/clock', { advanceMs });
  addCardBin = (bin: Record<string, unknown>) => this.call('POST', '/card-bins', bin);
  removeCardBin = (cardBinId: string) => this.call<{ ok: boolean }>('POST', `/card-bins/${cardBinId}/remove`);

  ledger = () => this.call<SandboxLedger>('GET', '/ledger');
  /** Every webhook delivery and its attempts, dropped ones included. */
  webhooks = async (): Promise<DeliveryLog[]> => (await this.call<{ deliveries: DeliveryLog[] }>('GET', '/webhooks')).deliveries;
  /** Per endpoint key (`getCard`, …): requests and answers by status. */
  stats = async (): Promise<Record<string, EndpointStats>> => (await this.call<{ endpoints: Record<string, EndpointStats> }>('GET', '/stats')).endpoints;
  /** One endpoint's statistics; zero when it was never called. */
  endpointStats = async (endpointKey: string): Promise<EndpointStats> => (await this.stats())[endpointKey] ?? { requests: 0, byStatus: {} };
}
