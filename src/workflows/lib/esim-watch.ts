/**
 * What the `esim/<esimNo>` entity workflow adds to its inbox: the eSIM's latest usage, read
 * from GET /esim/esims/{esimNo}/usage when a caller asks and no more than once a minute (the
 * provider syncs no faster, so a fresher read would only spend budget), and the eSIM's
 * alerts (ESIM_USAGE_ALERT, ESIM_EXPIRING, ESIM_EXPIRED), kept for callers to read and pushed
 * to subscribers with every other change of the entity.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { esimWatchQuery, refreshEsimUsageUpdate } from '../../shared/messages';
import type { EsimAlert, EsimWatchState, ProviderEvent } from '../../shared/types';
import { providerCalls } from './provider';

export const USAGE_MIN_INTERVAL_MS = 60_000;
const ALERT_TYPES: ReadonlySet<string> = new Set(['ESIM_USAGE_ALERT', 'ESIM_EXPIRING', 'ESIM_EXPIRED']);
/** Alerts kept, newest last; older ones are dropped first (they stay in the history). */
const MAX_ALERTS = 50;

export class EsimWatch {
  readonly state: EsimWatchState;
  #reading = false;

  constructor(esimNo: string, snapshot?: EsimWatchState) {
    this.state = snapshot ? { ...snapshot, alerts: [...snapshot.alerts] } : { esimNo, alerts: [] };
  }

  /** Registers the query and the refresh update. */
  wire(): void {
    setHandler(esimWatchQuery, () => this.state);
    setHandler(refreshEsimUsageUpdate, () => this.#refresh());
  }

  /** Records an alert event; true when it was one. */
  record(event: ProviderEvent): boolean {
    if (!ALERT_TYPES.has(event.eventType)) return false;
    const alert: EsimAlert = { eventId: event.eventId, eventType: event.eventType, createdAt: event.createdAt, data: event.data };
    this.state.alerts.push(alert);
    if (this.state.alerts.length > MAX_ALERTS) this.state.alerts.shift();
    return true;
  }

  async #refresh(): Promise<EsimWatchState> {
    // Concurrent callers share one read.
    await condition(() => !this.#reading);
    const fresh = this.state.usageReadAt !== undefined && Date.now() - this.state.usageReadAt < USAGE_MIN_INTERVAL_MS;
    if (fresh) return this.state;
    this.#reading = true;
    try {
      this.state.usage = await providerCalls('general').getEsimUsage({ esimNo: this.state.esimNo });
      this.state.usageReadAt = Date.now();
      return this.state;
    } finally {
      this.#reading = false;
    }
  }
}
