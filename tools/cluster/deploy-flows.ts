/**
 * The flows of `npm run cluster-deploy`, each remembered with the rollout phase it started in,
 * so that deploy.ts can ask its history which builds ran it. Flows that need nothing of their
 * own come from tools/flows.ts (eSIM purchase, payout, rejected KYC, the failing card); those
 * aimed at one card (standalone fundCard/withdrawFromCard, the typed client's card updates), an
 * approved KYC under an ID of its own and trackPayout are started here. Every completed money
 * movement is added to its card's expected balance, which the sandbox ledger must show at the end.
 */
import { isCardIssuingError, type CardIssuingClient } from '../../src/client';
import { sampleKycForm, writeSampleDocuments } from '../../src/sandbox/kyc-samples';
import { entityWorkflowId } from '../../src/shared/ids';
import type { MoneyMovementResult, WaitTimings } from '../../src/shared/types';
import { startFlow, type FlowName, type FlowRow, type FlowRun } from '../flows';

export type Phase = 'v1 current' | 'v2 ramping' | 'v2 current' | 'v3 ramping' | 'v3 rolled back';

export interface Tracked {
  phase: Phase;
  flow: string;
  workflowId: string;
  /** Pinned flows must end on the build they started on (or be moved). */
  pinned: boolean;
  /** A card update: found in the card workflow's history by its update ID (known once answered) or by its updates' names. */
  update?: { id?: string; names?: string[]; status?: string };
  /** A money update: the same request sent again (same idempotency key, so the same update ID); resolves its answer's update ID and status. */
  repeat?: () => Promise<{ updateId: string; status: string }>;
  row: Promise<FlowRow>;
  /** Set once the row settled: how many are in flight at each step. */
  done: boolean;
}

export interface Card {
  cardId: string;
  /** The phase of the issueCard that made it. */
  phase: Phase;
  /** The balance our completed flows leave on it. */
  expected: number;
}

export const INITIAL = 1000;
export const FUND = 2500;
export const WITHDRAW = 100;

type Started = { workflowId: string; update?: Tracked['update']; outcome: Promise<string> } & Pick<Tracked, 'repeat'>;

export class DeployFlows {
  readonly tracked: Tracked[] = [];
  readonly cards: Card[] = [];
  private n = 0;

  constructor(
    private readonly run: FlowRun,
    private readonly timings: WaitTimings,
  ) {}

  private get client(): CardIssuingClient {
    return this.run.client;
  }

  /** Starts a flow and tracks it; resolves once started (the row settles when it ends). */
  private async track(phase: Phase, flow: string, pinned: boolean, start: () => Promise<Started>): Promise<Tracked> {
    const began = Date.now();
    const started: Started = await start().catch((err: unknown) => ({ workflowId: '', outcome: Promise.reject(err) as Promise<string> }));
    const row = started.outcome.then(
      (outcome) => ({ flow, workflowId: started.workflowId, outcome, ok: true, ms: Date.now() - began }),
      (err: unknown) => ({ flow, workflowId: started.workflowId, outcome: failure(err), ok: false, ms: Date.now() - began }),
    );
    void row.then((r) => !r.ok && this.run.log(`FAIL ${phase} ${flow} ${r.workflowId}: ${r.outcome}`));
    return this.add({ phase, flow, workflowId: started.workflowId, pinned, update: started.update, repeat: started.repeat, row, done: false });
  }

  private add(tracked: Tracked): Tracked {
    void tracked.row.then(() => (tracked.done = true));
    this.tracked.push(tracked);
    return tracked;
  }

  /** Flows started and not ended yet (of `phase`, and pinned ones only when asked). */
  inFlight(phase?: Phase, pinnedOnly = false): number {
    return this.tracked.filter((t) => !t.done && (phase === undefined || t.phase === phase) && (!pinnedOnly || t.pinned)).length;
  }

  /** One of tools/flows.ts's flows, as the demo and the smoke run it. */
  async flows(phase: Phase, name: FlowName, pinned: boolean): Promise<Tracked> {
    const { workflowId, row } = await startFlow(name, this.run);
    return this.add({ phase, flow: name, workflowId, pinned, row, done: false });
  }

  /** issueCard (pinned); the card it makes joins `cards`. */
  issue(phase: Phase): Promise<Tracked> {
    return this.track(phase, 'issueCard', true, async () => {
      const handle = await this.client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: INITIAL, firstName: 'Deploy', lastName: `Run ${letters(this.n++)}`, timings: this.timings, idempotencyKey: this.key('card') });
      const outcome = handle.result().then((card) => {
        this.cards.push({ cardId: card.cardId, phase, expected: INITIAL });
        return `${card.status} ${card.cardId}`;
      });
      return { workflowId: handle.workflowId, outcome };
    });
  }

  /** A standalone fundCard or withdrawFromCard workflow (pinned), started by type on the main queue. */
  standalone(phase: Phase, type: 'fundCard' | 'withdrawFromCard', card: Card): Promise<Tracked> {
    const amount = type === 'fundCard' ? FUND : WITHDRAW;
    return this.track(phase, type, true, async () => {
      const { client, taskQueue } = this.client.temporal;
      const workflowId = `deploy-${type}-${this.n++}-${this.key('flow')}`;
      const handle = await client.workflow.start(type, { taskQueue, workflowId, args: [{ cardId: card.cardId, amount, timings: this.timings }] });
      return { workflowId, outcome: (handle.result() as Promise<MoneyMovementResult>).then((r) => this.moved(card, type === 'fundCard' ? amount : -amount, r.status)) };
    });
  }

  /** A money update of the card's own workflow through the typed client (the card workflow is pinned to each run's build and moves at a continue-as-new). */
  moneyUpdate(phase: Phase, verb: 'fund' | 'withdraw', card: Card): Promise<Tracked> {
    const amount = verb === 'fund' ? FUND : WITHDRAW;
    const input = { cardId: card.cardId, amount, timings: this.timings, idempotencyKey: this.key(verb) };
    const send = () => (verb === 'fund' ? this.client.fundCard(input) : this.client.withdrawFromCard(input)).then((r) => ({ updateId: r.updateId, status: r.status }));
    return this.track(phase, `${verb} update`, false, async () => {
      const update: Tracked['update'] = {};
      const outcome = send().then((r) => {
        Object.assign(update, { id: r.updateId, status: r.status });
        return this.moved(card, verb === 'fund' ? amount : -amount, r.status);
      });
      return { workflowId: entityWorkflowId('card', card.cardId), update, outcome, repeat: send };
    });
  }

  /** A freeze then an unfreeze of the card through the typed client: one row, both updates. */
  freezeUnfreeze(phase: Phase, card: Card): Promise<Tracked> {
    return this.track(phase, 'freeze+unfreeze', false, async () => ({
      workflowId: entityWorkflowId('card', card.cardId),
      update: { names: ['freezeCard', 'unfreezeCard'] },
      outcome: (async () => `${(await this.client.freeze(card.cardId)).status} then ${(await this.client.unfreeze(card.cardId)).status}`)(),
    }));
  }

  /** An approved KYC onboarding under an ID number of its own (the sandbox refuses a duplicate cardholder). */
  kyc(phase: Phase): Promise<Tracked> {
    return this.track(phase, 'onboardCardholder', false, async () => {
      const docs = (this.run.made.documents ??= writeSampleDocuments()).documents;
      const form = sampleKycForm(docs, { timings: this.timings, idNumber: `P${this.key('kyc').replace(/[^A-Za-z0-9]/g, '').slice(-16)}` });
      const handle = await this.client.startOnboardCardholder({ ...form, idempotencyKey: this.key('kyc') });
      return { workflowId: handle.workflowId, outcome: handle.result().then((r) => `${r.kycStatus} ${r.id}`) };
    });
  }

  /** trackPayout on a payout that an earlier flow sent (its workflow's result names it). */
  trackPayout(phase: Phase, payoutWorkflowId: string): Promise<Tracked> {
    return this.track(phase, 'trackPayout', false, async () => {
      const { merOrderNo } = (await this.client.temporal.client.workflow.getHandle(payoutWorkflowId).result()) as { merOrderNo: string };
      const handle = await this.client.startTrackPayout({ merOrderNo, timings: this.timings });
      return { workflowId: handle.workflowId, outcome: handle.result().then((p) => `${p.status} ${p.merOrderNo}`) };
    });
  }

  /** Rows of the flows started so far, once each has ended. */
  async rows(phase?: Phase): Promise<FlowRow[]> {
    return Promise.all(this.tracked.filter((t) => phase === undefined || t.phase === phase).map((t) => t.row));
  }

  private moved(card: Card, delta: number, status: string): string {
    card.expected += delta;
    return `${status} ${delta > 0 ? '+' : '-'}${(Math.abs(delta) / 100).toFixed(2)}`;
  }

  private key(what: string): string {
    return `${this.run.tag}-${what}-${(this.n++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`.slice(0, 64);
  }
}

function failure(err: unknown): string {
  const typed = isCardIssuingError(err) ? err : undefined;
  return `${typed?.type ?? (err as Error)?.name ?? 'Error'}: ${typed?.message ?? (err as Error)?.message ?? String(err)}`;
}

/** `n` in letters (a card holder's name takes no digits): 0 → a, 27 → bb. */
function letters(n: number): string {
  let out = '';
  for (let k = n; ; k = Math.floor(k / 26) - 1) {
    out = String.fromCharCode(97 + (k % 26)) + out;
    if (k < 26) return out;
  }
}
