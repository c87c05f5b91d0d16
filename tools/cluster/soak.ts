/**
 * `npm run cluster-soak` (opt-in, not part of `npm test`): the cluster of the smoke run
 * (cluster.ts: Temporal server from its Go module on PostgreSQL, the sandbox) with 3 workers and
 * 2 bridges, under a stream of mixed flows (issuance, funding, withdrawal, card updates, payouts,
 * eSIM, KYC) while workers, a bridge and the Temporal server are killed (SIGKILL) in turn, again
 * and again. It passes when every flow ended as asked, the sandbox ledger has no violation and
 * every card's balance at the provider is exactly what our completed flows moved, and every
 * webhook was delivered. A table by flow kind, the kills, and the throughput against the
 * provider's window go to stdout (docs/performance.md keeps the figures of a run).
 *
 *   npm run cluster-soak                         # 1,000 flows, a kill every 15 s, at least 20 kills
 *   npm run cluster-soak -- --flows=200 --kills=8 --window-ms=15000   # a quicker check
 */
import { rmSync } from 'node:fs';
import { writeSampleDocuments, sampleKycForm } from '../../src/sandbox/kyc-samples';
import type { WaitTimings } from '../../src/shared/types';
import { isCardIssuingError, type CardIssuingClient } from '../../src/client';
import { renderTable } from '../../src/starter/output';
import { RATE_QUEUE_LIMITS } from '../../src/shared/task-queues';
import { deliverySummary, outlastingOutages, pause, runToExit, startCluster, stoppers, type Cluster, type Restartable } from './cluster';

const say = (line: string) => process.stdout.write(`cluster-soak: ${line}\n`);

interface SoakOptions {
  flows: number;
  minKills: number;
  killEveryMs: number;
  inFlight: number;
  windowMs: number;
}

function options(argv: string[]): SoakOptions {
  const flag = (name: string, fallback: number) => {
    const raw = argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer, got ${raw}`);
    return value;
  };
  return { flows: flag('flows', 1000), minKills: flag('kills', 20), killEveryMs: flag('kill-every-ms', 15_000), inFlight: flag('in-flight', 40), windowMs: flag('window-ms', 60_000) };
}

/** Long enough to outlast the kills: a flow waits for its webhook, then polls, until its deadline. */
const TIMINGS: WaitTimings = { webhookWaitMs: 15_000, pollInitialIntervalMs: 1000, pollMaxIntervalMs: 5000, deadlineMs: 1_200_000 };
const SANDBOX = { cardProvisioningMs: 1500, kycReviewMs: 2500, esimIssueMs: 1000, payoutProcessingMs: 1500, webhook: { retryBaseMs: 500 } };
const INITIAL = 1000;
const FUND = 2500;
const WITHDRAW = 100;
/** Withdrawals per card stay within its initial amount, so none can meet InsufficientFunds. */
const MAX_WITHDRAWALS = INITIAL / WITHDRAW;

type Kind = 'issue' | 'issue (FAIL)' | 'fund' | 'withdraw' | 'freeze+unfreeze' | 'payout' | 'eSIM purchase' | 'KYC' | 'KYC (rejected)';
/** Out of 100: the mix of one block of flows. */
const MIX: Array<[Kind, number]> = [
  ['issue', 24],
  ['issue (FAIL)', 2],
  ['fund', 22],
  ['withdraw', 14],
  ['freeze+unfreeze', 10],
  ['payout', 10],
  ['eSIM purchase', 8],
  ['KYC', 7],
  ['KYC (rejected)', 3],
];
const SEQUENCE: Kind[] = spread(MIX);

interface Card {
  cardId: string;
  expected: number;
  withdrawals: number;
  /** Cards for freeze and unfreeze get no money movement, so a frozen card never meets a funding. */
  forUpdates: boolean;
  busy: boolean;
}

interface Row {
  kind: Kind;
  ok: boolean;
  outcome: string;
  ms: number;
}

class Soak {
  readonly cards: Card[] = [];
  readonly rows: Row[] = [];
  private readonly docs = writeSampleDocuments();
  constructor(
    private readonly client: CardIssuingClient,
    private readonly runTag: string,
  ) {
    stoppers.push(async () => rmSync(this.docs.dir, { recursive: true, force: true }));
  }

  /** Flow `n` of the stream: its kind from the mix, or an issue while no card it needs exists yet. */
  async flow(n: number): Promise<void> {
    let kind = SEQUENCE[n % SEQUENCE.length];
    const card = this.cardFor(kind);
    if ((kind === 'fund' || kind === 'withdraw' || kind === 'freeze+unfreeze') && !card) kind = 'issue';
    const started = Date.now();
    const id = `soak-${this.runTag}-${n}`;
    try {
      const outcome = await this.run(kind, id, n, card);
      this.rows.push({ kind, ok: true, outcome, ms: Date.now() - started });
    } catch (err) {
      const failure = isCardIssuingError(err) ? err : undefined;
      const type = failure?.type ?? (err as Error).name;
      const expected = kind === 'issue (FAIL)' && type === 'CardProvisioningFailed';
      this.rows.push({ kind, ok: expected, outcome: expected ? type : `${type}: ${failure?.message ?? (err as Error).message}`, ms: Date.now() - started });
      if (!expected) say(`FAIL ${kind} ${id}: ${type}: ${failure?.message ?? (err as Error).message}`);
    } finally {
      if (card) card.busy = false;
    }
  }

  private cardFor(kind: Kind): Card | undefined {
    const pick = (ok: (c: Card) => boolean) => {
      const candidates = this.cards.filter(ok);
      const card = candidates[Math.floor(Math.random() * candidates.length)];
      if (card && kind === 'freeze+unfreeze') card.busy = true;
      return card;
    };
    if (kind === 'fund') return pick((c) => !c.forUpdates);
    if (kind === 'withdraw') {
      const card = pick((c) => !c.forUpdates && c.withdrawals < MAX_WITHDRAWALS);
      if (card) card.withdrawals++; // reserved before the flow runs: concurrent withdrawals never exceed the cap
      return card;
    }
    if (kind === 'freeze+unfreeze') return pick((c) => c.forUpdates && !c.busy);
    return undefined;
  }

  private async run(kind: Kind, workflowId: string, n: number, card: Card | undefined): Promise<string> {
    const c = this.client;
    const started = <R>(start: () => Promise<{ result(): Promise<R> }>) => outlastingOutages(start).then((h) => outlastingOutages(() => h.result(), TIMINGS.deadlineMs));
    // The flow's key, from its row's ID: a start asked again across an outage joins the first.
    const idempotencyKey = workflowId.replace(/[^a-zA-Z0-9_-]/g, '-').slice(0, 64);
    switch (kind) {
      case 'issue':
      case 'issue (FAIL)': {
        const firstName = kind === 'issue' ? 'Soak' : 'FAIL';
        const view = await started(() => c.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: INITIAL, firstName, lastName: `Run ${letters(n)}`, timings: TIMINGS, idempotencyKey }));
        this.cards.push({ cardId: view.cardId, expected: INITIAL, withdrawals: 0, forUpdates: this.cards.length % 4 === 3, busy: false });
        return view.status;
      }
      case 'fund': {
        const r = await outlastingOutages(() => c.fundCard({ cardId: card!.cardId, amount: FUND, timings: TIMINGS, idempotencyKey }), TIMINGS.deadlineMs);
        card!.expected += FUND;
        return r.status;
      }
      case 'withdraw': {
        const r = await outlastingOutages(() => c.withdrawFromCard({ cardId: card!.cardId, amount: WITHDRAW, timings: TIMINGS, idempotencyKey }), TIMINGS.deadlineMs);
        card!.expected -= WITHDRAW;
        return r.status;
      }
      case 'freeze+unfreeze':
        await this.cardUpdate(card!.cardId, 'freeze', 'DISABLE');
        await this.cardUpdate(card!.cardId, 'unfreeze', 'ENABLE');
        return 'frozen and unfrozen';
      case 'payout': {
        const merOrderNo = `soak_${this.runTag}_${n}`;
        const p = await started(() =>
          c.startSendPayout(
            { merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 5000, payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: TIMINGS, idempotencyKey },
          ),
        );
        if (p.status !== 'SUCCESS' && p.status !== 'COMPLETED') throw new Error(`payout ${p.status}`);
        return p.status;
      }
      case 'eSIM purchase':
        return (await started(() => c.startPurchaseEsim({ planNo: 'epln_global_1gb', timings: TIMINGS, idempotencyKey }))).status;
      case 'KYC':
      case 'KYC (rejected)': {
        const reject = kind === 'KYC (rejected)';
        const form = sampleKycForm(this.docs.documents, { timings: TIMINGS, ...(reject ? { idNumber: `REJECT${n}` } : { idNumber: `P${this.runTag}${n}` }) });
        const r = await started(() => c.startOnboardCardholder({ ...form, idempotencyKey }));
        if (r.kycStatus !== (reject ? 'REJECTED' : 'APPROVED')) throw new Error(`KYC ${r.kycStatus}, expected ${reject ? 'REJECTED' : 'APPROVED'}`);
        return r.kycStatus;
      }
    }
  }

  /**
   * An update asked again across an outage. Updates carry no ID of ours here, so a retry after an
   * answer lost in a kill may find the card already in the state asked for: the card's own state
   * decides.
   */
  private async cardUpdate(cardId: string, op: 'freeze' | 'unfreeze', want: string): Promise<void> {
    try {
      const view = await outlastingOutages(() => this.client[op](cardId));
      if (view.status !== want) throw new Error(`${op}: card ${view.status}, expected ${want}`);
    } catch (err) {
      const state = await outlastingOutages(() => this.client.cardState(cardId));
      if (state.status !== want) throw err;
    }
  }
}

/** Kills in turn: a worker, a bridge, a worker, the server, …; each comes back before the next. */
async function chaos(cluster: Cluster, opts: SoakOptions, done: () => boolean, inFlight: () => number, log: string[]): Promise<number> {
  const targets: Array<{ name: string; kill: () => Promise<void> }> = [];
  const restartAfter = (p: Restartable) => async () => {
    await p.kill();
    await pause(3000);
    await p.start();
  };
  for (let i = 0; ; i++) {
    const w = cluster.workers[i % cluster.workers.length];
    targets.push({ name: w.name, kill: restartAfter(w) });
    if (i % 2 === 0) targets.push({ name: cluster.bridges[(i / 2) % cluster.bridges.length].name, kill: restartAfter(cluster.bridges[(i / 2) % cluster.bridges.length]) });
    else targets.push({ name: 'Temporal server', kill: () => cluster.server.crash() });
    if (targets.length >= 4 * opts.minKills) break;
  }
  let kills = 0;
  let lastKillAt = Date.now();
  while (!done() || kills < opts.minKills) {
    await pause(opts.killEveryMs);
    const t = targets[kills % targets.length];
    const at = Date.now();
    const flying = inFlight();
    await t.kill();
    kills++;
    lastKillAt = Date.now();
    const line = `kill ${kills}: ${t.name} (SIGKILL) with ${flying} flows in flight, back in ${Date.now() - at} ms`;
    log.push(line);
    say(line);
  }
  return lastKillAt;
}

async function main(): Promise<number> {
  const opts = options(process.argv.slice(2));
  const cluster = await startCluster({
    name: 'cluster-soak',
    namespace: 'card-issuing-soak',
    workers: 3,
    bridges: 2,
    sandbox: { ...SANDBOX, rateLimit: { windowMs: opts.windowMs } },
    env: { PROVIDER_RATE_WINDOW_MS: String(opts.windowMs) },
    say,
  });
  const soak = new Soak(cluster.client, Date.now().toString(36));
  say(`${opts.flows} flows, ${opts.inFlight} at a time, a kill every ${opts.killEveryMs / 1000} s (at least ${opts.minKills}), provider window ${opts.windowMs / 1000} s`);

  const started = Date.now();
  let next = 0;
  let finished = 0;
  const kills: string[] = [];
  const lanes = Array.from({ length: opts.inFlight }, async () => {
    for (let n = next++; n < opts.flows; n = next++) {
      await soak.flow(n);
      if (++finished % 50 === 0) say(`${finished} of ${opts.flows} flows ended (${Math.round((Date.now() - started) / 1000)} s)`);
    }
  });
  const lastKillAtP = chaos(cluster, opts, () => next >= opts.flows, () => Math.min(next, opts.flows) - finished, kills);
  await Promise.all(lanes);
  const lastFlowAt = Date.now();
  const lastKillAt = await lastKillAtP;

  return report(cluster, soak, opts, { started, lastFlowAt, lastKillAt, kills });
}

async function report(cluster: Cluster, soak: Soak, opts: SoakOptions, t: { started: number; lastFlowAt: number; lastKillAt: number; kills: string[] }): Promise<number> {
  const minutes = (t.lastFlowAt - t.started) / 60_000;
  const byKind = [...new Set(soak.rows.map((r) => r.kind))].map((kind) => {
    const rows = soak.rows.filter((r) => r.kind === kind);
    const ms = rows.map((r) => r.ms).sort((a, b) => a - b);
    return { flow: kind, flows: rows.length, 'as asked': rows.filter((r) => r.ok).length, 'p50 s': (ms[Math.floor(ms.length / 2)] / 1000).toFixed(1), 'max s': (ms[ms.length - 1] / 1000).toFixed(1) };
  });
  process.stdout.write(`\n${renderTable(byKind, ['flow', 'flows', 'as asked', 'p50 s', 'max s'], { alignRight: ['flows', 'as asked', 'p50 s', 'max s'], rule: true })}\n\n`);
  const allOk = soak.rows.length === opts.flows && soak.rows.every((r) => r.ok);
  say(`${soak.rows.filter((r) => r.ok).length} of ${opts.flows} flows ended as asked in ${minutes.toFixed(1)} min (${(soak.rows.length / minutes).toFixed(1)} flows/min)`);
  const during = t.kills.filter((k) => !k.includes(' with 0 flows'));
  const count = (what: string) => `${during.filter((k) => k.includes(what)).length} of ${t.kills.filter((k) => k.includes(what)).length}`;
  say(`${t.kills.length} kills survived, ${during.length} of them with flows in flight (workers ${count('worker')}, bridges ${count('bridge')}, Temporal server ${count('server')}); the last flow ended ${Math.round((t.lastFlowAt - t.lastKillAt) / 1000)} s after the last kill`);

  await throughput(cluster, opts, t.lastFlowAt - t.started);
  const delivered = await webhooksDelivered(cluster);
  const ledger = await ledgerExact(cluster, soak);
  const ok = allOk && delivered && ledger;
  say(ok ? 'PASSED' : 'FAILED');
  if (ok) rmSync(cluster.dir, { recursive: true, force: true });
  else say(`logs kept in ${cluster.dir}`);
  return ok ? 0 : 1;
}

/** Provider calls per window against the endpoint's limit, averaged over the run. */
async function throughput(cluster: Cluster, opts: SoakOptions, ms: number): Promise<void> {
  const stats = await cluster.control.stats();
  const windows = ms / opts.windowMs;
  const limits: Record<string, number> = { createCard: RATE_QUEUE_LIMITS['card-create'], getCard: RATE_QUEUE_LIMITS['card-read'], fundCard: RATE_QUEUE_LIMITS.funding, withdrawFromCard: RATE_QUEUE_LIMITS.withdrawal };
  const rows = Object.entries(stats)
    .filter(([, s]) => s.requests > 0)
    .sort((a, b) => b[1].requests - a[1].requests)
    .map(([endpoint, s]) => ({ endpoint, calls: s.requests, 'per window': (s.requests / windows).toFixed(1), limit: limits[endpoint] ?? '', '429': s.byStatus['429'] ?? 0 }));
  process.stdout.write(`${renderTable(rows, ['endpoint', 'calls', 'per window', 'limit', '429'], { alignRight: ['calls', 'per window', 'limit', '429'], rule: true })}\n\n`);
  // The presigned upload itself is not an API call; operation lookups count against funding and withdrawal.
  const general = rows.filter((r) => !(r.endpoint in limits) && r.endpoint !== 'upload' && r.endpoint !== 'getOperation').reduce((sum, r) => sum + r.calls, 0);
  say(`general rate class (every other endpoint, limit ${RATE_QUEUE_LIMITS.general} per window): ${(general / windows).toFixed(1)} calls per window on average; 429 answers: ${rows.reduce((s, r) => s + Number(r['429']), 0)}`);
  // Issue 52: the card reads (issuance polls, read-backs after card actions, balance reads on demand) against the movements they once followed.
  const calls = (endpoint: string) => rows.find((r) => r.endpoint === endpoint)?.calls ?? 0;
  const movements = calls('fundCard') + calls('withdrawFromCard');
  const reads = calls('getCard');
  say(`card reads (GET /cards/{cardId}, limit ${RATE_QUEUE_LIMITS['card-read']} per window): ${(reads / windows).toFixed(1)} per window, ${((100 * reads) / windows / RATE_QUEUE_LIMITS['card-read']).toFixed(1)} % of the window; ${movements === 0 ? '-' : (reads / movements).toFixed(2)} per money movement (${reads} reads, ${movements} movements)`);
}

/** Every webhook delivered, once the sandbox has nothing pending (it redelivers what a killed bridge missed). */
async function webhooksDelivered(cluster: Cluster): Promise<boolean> {
  const deadline = Date.now() + 120_000;
  let d = await deliverySummary(cluster.control);
  while (d.pending > 0 && Date.now() < deadline) {
    await pause(2000);
    d = await deliverySummary(cluster.control);
  }
  const ok = d.delivered === d.total;
  say(`webhooks: ${d.delivered} of ${d.total} delivered${d.pending ? `, ${d.pending} still pending` : ''}; ${d.noBridge} attempt(s) found no bridge (a killed one) and were redelivered${d.notDelivered.length ? `; not delivered: ${d.notDelivered.slice(0, 10).join(', ')}` : ''}`);
  return ok;
}

/** No violation in the sandbox ledger, and each card's balance exactly what our completed flows moved. */
async function ledgerExact(cluster: Cluster, soak: Soak): Promise<boolean> {
  const ledger = await cluster.control.ledger();
  const balances = new Map(ledger.cards.map((c) => [c.cardId, c.availableBalance]));
  const wrong = soak.cards.filter((c) => balances.get(c.cardId) !== c.expected);
  const moved = soak.cards.reduce((sum, c) => sum + c.expected, 0);
  const ok = ledger.violations.length === 0 && wrong.length === 0;
  say(
    ok
      ? `sandbox ledger exact: no violation in ${ledger.entryCount} entries, and all ${soak.cards.length} cards hold what our flows moved (${(moved / 100).toFixed(2)} in all)`
      : `sandbox ledger: ${ledger.violations.length} violation(s) ${JSON.stringify(ledger.violations.slice(0, 5))}; ${wrong.length} card(s) off: ${wrong.slice(0, 5).map((c) => `${c.cardId} ${balances.get(c.cardId)} != ${c.expected}`).join(', ')}`,
  );
  return ok;
}

/** `n` in letters (a card holder's name takes no digits): 0 → a, 27 → bb. */
function letters(n: number): string {
  let out = '';
  for (let k = n; ; k = Math.floor(k / 26) - 1) {
    out = String.fromCharCode(97 + (k % 26)) + out;
    if (k < 26) return out;
  }
}

/** The mix as a sequence of 100 kinds, interleaved rather than in blocks. */
function spread(mix: Array<[Kind, number]>): Kind[] {
  const out: Kind[] = [];
  const left = new Map(mix);
  while (out.length < 100) {
    for (const [kind] of mix) {
      if ((left.get(kind) ?? 0) > 0) {
        out.push(kind);
        left.set(kind, left.get(kind)! - 1);
      }
    }
  }
  return out;
}

runToExit(main, say);
