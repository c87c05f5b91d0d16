/**
 * The flows the demo shows, each written once, end to end through the typed client:
 * `npm run demo` runs DEMO_FLOWS one after the other (tools/demo.ts); the cluster smoke starts the
 * same flows in waves around its kills and its server restart (tools/cluster/smoke.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { SandboxControlClient } from '../src/sandbox/control-client';
import { sampleKycForm, writeSampleDocuments } from '../src/sandbox/kyc-samples';
import { entityWorkflowId } from '../src/shared/ids';
import type { KycDocuments, WaitTimings } from '../src/shared/types';
import { isCardIssuingError, type CardIssuingClient } from '../src/client';
import { renderTable } from '../src/starter/output';
import { reconcileNow } from '../src/starter/reconciliation';
import { RECONCILE_KINDS, RECONCILIATIONS, summariseReport, type DriftReport, type ReconcileKind } from '../src/shared/reconciliation';

/** What the flows of one run share. */
export interface FlowRun {
  client: CardIssuingClient;
  control: SandboxControlClient;
  timings: WaitTimings;
  /** Names the run in what its flows make: the failing card's holder, the merchant, the payout's order number. */
  tag: string;
  /** Told each row as it settles. */
  log(line: string): void;
  /** How a started workflow's result is awaited (the cluster smoke asks again across a server restart). */
  awaitResult<R>(result: () => Promise<R>): Promise<R>;
  /** What earlier flows made, for later ones. */
  made: { cardId?: string; esimNo?: string; merOrderNo?: string; documents?: { dir: string; documents: KycDocuments } };
}

export interface FlowRow {
  flow: string;
  workflowId: string;
  outcome: string;
  ok: boolean;
  ms: number;
}

interface Flow {
  /** The failure type that is this flow's expected outcome. */
  expectedFailure?: string;
  /** Starts the flow; resolves with its workflow ID once started, and its outcome's text to come. */
  start(run: FlowRun): Promise<{ workflowId: string; outcome: Promise<string> }>;
}

const money = (cents: number) => (cents / 100).toFixed(2);

/** Each money call's idempotency key: drawn once per start, as a caller draws one per request and repeats it on retry. */
const keyOf = (run: FlowRun, what: string) => `${run.tag}-${what}-${randomUUID()}`.slice(0, 64);

/** A workflow started through the client; `describe` reads its result (and may keep what later flows need). */
function workflow<R>(start: (run: FlowRun) => Promise<{ workflowId: string; result(): Promise<R> }>, describe: (result: R, run: FlowRun) => string, expectedFailure?: string): Flow {
  return {
    expectedFailure,
    start: async (run) => {
      const handle = await start(run);
      return { workflowId: handle.workflowId, outcome: run.awaitResult(() => handle.result()).then((r) => describe(r, run)) };
    },
  };
}

/** An update or query on the card's own workflow. */
function onCard(op: (run: FlowRun, cardId: string) => Promise<string>): Flow {
  return {
    start: async (run) => {
      const cardId = made(run.made.cardId, 'a card (issue card)');
      return { workflowId: entityWorkflowId('card', cardId), outcome: op(run, cardId) };
    },
  };
}

/** Runs reconciliations now (as the `reconcile` command does); `verdict` reads their reports. */
function reconciliation(kinds: readonly ReconcileKind[], verdict: (reports: DriftReport[]) => string): Flow {
  return {
    start: async (run) => ({
      workflowId: kinds.map((k) => RECONCILIATIONS[k].scheduleId).join(', '),
      outcome: reconcileNow(run.client.temporal, kinds).then(verdict),
    }),
  };
}

/** The card workflow's balance (and status, when one is asked for) once it matches the sandbox's ledger. */
function balanceMatchesLedger(status?: string): Flow {
  return onCard(async ({ client, control }, cardId) => {
    const ledger = async () => (await control.ledger()).cards.find((c) => c.cardId === cardId)?.availableBalance;
    const state = await eventually(async () => {
      const [s, l] = await Promise.all([client.cardState(cardId), ledger()]);
      return s.card?.availableBalance === l && s.balanceReadAt !== undefined && (status === undefined || s.status === status) ? s : undefined;
    }, 15_000);
    const balance = money(state.card!.availableBalance);
    return `${status === undefined ? '' : `${state.status}, `}balance ${balance} read ${new Date(state.balanceReadAt!).toISOString()}, ledger ${balance}`;
  });
}

function made<T>(value: T | undefined, what: string): T {
  if (value === undefined || value === '') throw new Error(`needs ${what}, which an earlier flow did not make`);
  return value;
}

const documents = (run: FlowRun) => (run.made.documents ??= writeSampleDocuments()).documents;

export const FLOWS = {
  'issue card': workflow(
    (run) => run.client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace', timings: run.timings, idempotencyKey: keyOf(run, 'card') }),
    (card, run) => {
      run.made.cardId = card.cardId;
      return `${card.status} ${card.cardNumber}, balance ${money(card.availableBalance)}`;
    },
  ),
  'issue a second card': workflow(
    (run) => run.client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: 500, firstName: 'Grace', lastName: 'Hopper', timings: run.timings, idempotencyKey: keyOf(run, 'card') }),
    (card) => `${card.status} ${card.cardNumber}`,
  ),
  'fund card (update)': onCard(async (run, cardId) => {
    const r = await run.client.fundCard({ cardId, amount: 2500, timings: run.timings, idempotencyKey: keyOf(run, 'fund') });
    return `${r.status} +${money(2500)}`;
  }),
  'withdraw from card (update)': onCard(async (run, cardId) => {
    const r = await run.client.withdrawFromCard({ cardId, amount: 1000, timings: run.timings, idempotencyKey: keyOf(run, 'withdraw') });
    return `${r.status} -${money(1000)}`;
  }),
  'freeze (update)': onCard(async ({ client }, cardId) => (await client.freeze(cardId)).status),
  'unfreeze (update)': onCard(async ({ client }, cardId) => (await client.unfreeze(cardId)).status),
  'card transaction (webhook)': onCard(async ({ client, control, tag }, cardId) => {
    const merchantName = `${tag} Coffee`;
    await control.cardTransaction(cardId, 420, merchantName);
    const seen = await eventually(async () => (await client.cardState(cardId)).recentTransactions.find((t) => t.merchantName === merchantName));
    return `${money(seen.amount)} at ${seen.merchantName}, seen by the card workflow`;
  }),
  'card state (query)': onCard(async ({ client }, cardId) => {
    const state = await client.cardState(cardId);
    return `${state.status}, balance ${money(state.card?.availableBalance ?? 0)}, ${state.recentTransactions.length} transaction(s)`;
  }),
  // Proof without disclosure: the last four match the masked card, and only they are printed.
  'reveal sensitive (sealed)': onCard(async ({ client }, cardId) => `PAN …${(await client.revealSensitive(cardId)).cardNumber.slice(-4)} unsealed by the client only`),
  'failing card (firstName FAIL)': workflow(
    (run) => run.client.startIssueCard({ cardBinId: 'bin_visa_basic', initialAmount: 1000, firstName: 'FAIL', lastName: run.tag, timings: run.timings, idempotencyKey: keyOf(run, 'card') }),
    (card) => card.status,
    'CardProvisioningFailed',
  ),
  'KYC onboarding': workflow(
    (run) => run.client.startOnboardCardholder({ ...sampleKycForm(documents(run), { timings: run.timings }), idempotencyKey: keyOf(run, 'kyc') }),
    (r) => `${r.kycStatus} ${r.id}`,
  ),
  'KYC onboarding (rejected)': workflow(
    (run) =>
      run.client.startOnboardCardholder({ ...sampleKycForm(documents(run), { idNumber: `REJECT${randomBytes(4).toString('hex')}`, timings: run.timings }), idempotencyKey: keyOf(run, 'kyc') }),
    (r) => {
      // A rejection is a result of the flow; here it is the one asked for.
      if (r.kycStatus !== 'REJECTED') throw new Error(`expected REJECTED, got ${r.kycStatus}`);
      return `${r.kycStatus} (${r.reason ?? 'no reason'}), as asked`;
    },
  ),
  'eSIM purchase': workflow(
    (run) => run.client.startPurchaseEsim({ planNo: 'epln_global_1gb', timings: run.timings, idempotencyKey: keyOf(run, 'esim') }),
    (order, run) => {
      run.made.esimNo = order.esimNo ?? undefined;
      return `${order.status} ${order.esimNo}${order.amount === undefined ? '' : `, ${money(order.amount)}`}`;
    },
  ),
  'eSIM recharge': workflow(
    (run) => run.client.startRechargeEsim({ esimNo: made(run.made.esimNo, 'an eSIM (eSIM purchase)'), timings: run.timings, idempotencyKey: keyOf(run, 'recharge') }),
    (order) => `${order.status} ${order.orderNo}`,
  ),
  payout: workflow(
    (run) => {
      run.made.merOrderNo = `${run.tag.toLowerCase()}_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
      return run.client.startSendPayout({
        merOrderNo: run.made.merOrderNo, paymentType: 'BANK_TRANSFER', arriveCurrency: 'EUR', arriveAmount: 5000,
        payeeFirstName: 'Ada', payeeLastName: 'Lovelace', payeeAccountNo: 'GB29NWBK60161331926819', timings: run.timings, idempotencyKey: run.made.merOrderNo,
      });
    },
    (p) => `${p.status} ${(p.arriveAmount ?? 0) / 100} ${p.arriveCurrency ?? ''}`,
  ),
  'track payout': workflow(
    ({ client, timings, made: m }) => client.startTrackPayout({ merOrderNo: made(m.merOrderNo, 'a payout'), timings }),
    (p) => `${p.status} ${p.merOrderNo}`,
  ),
  'delete card (update)': onCard(async ({ client }, cardId) => (await client.delete(cardId)).status),
  // The card workflow reads its balance after each movement and spend (issue 22): it matches the provider's ledger.
  'card balance = ledger': balanceMatchesLedger(),
  // No webhook says a deletion finished: the card workflow reads the card until the provider says DELETED, its balance back in the wallet.
  'deleted card = ledger': balanceMatchesLedger('DELETED'),
  reconciliation: reconciliation(RECONCILE_KINDS, (reports) => {
    if (reports.some((r) => r.differences.length > 0)) throw new Error(reports.map(summariseReport).join('; '));
    return `no difference (${reports.map((r) => `${r.kind} ${r.checked}`).join(', ')} checked)`;
  }),
} satisfies Record<string, Flow>;

export type FlowName = keyof typeof FLOWS;

/** What `npm run demo` runs, in this order: every flow but the cluster smoke's extras. */
export const DEMO_FLOWS: readonly FlowName[] = [
  'issue card',
  'fund card (update)',
  'card balance = ledger',
  'withdraw from card (update)',
  'card balance = ledger',
  'freeze (update)',
  'unfreeze (update)',
  'card transaction (webhook)',
  'card balance = ledger',
  'card state (query)',
  'reveal sensitive (sealed)',
  'failing card (firstName FAIL)',
  'KYC onboarding',
  'KYC onboarding (rejected)',
  'eSIM purchase',
  'eSIM recharge',
  'payout',
  'delete card (update)',
  'deleted card = ledger',
  'reconciliation',
];

/** Starts a flow; `row` settles (never rejects) with its outcome, an expected failure counting as ok. */
export async function startFlow(name: FlowName, run: FlowRun): Promise<{ workflowId: string; row: Promise<FlowRow> }> {
  const flow: Flow = FLOWS[name];
  const started = Date.now();
  let workflowId = '';
  let outcome: Promise<string>;
  try {
    ({ workflowId, outcome } = await flow.start(run));
  } catch (err) {
    outcome = Promise.reject(err);
  }
  const row = outcome
    .then((text) => ({ outcome: text, ok: flow.expectedFailure === undefined }), (err: unknown) => failedOutcome(err, flow.expectedFailure))
    .then((o) => {
      run.log(`${o.ok ? 'ok  ' : 'FAIL'} ${name}: ${o.outcome}`);
      return { flow: name, workflowId, ...o, ms: Date.now() - started };
    });
  return { workflowId, row };
}

/** Runs flows one after the other. */
export async function runFlows(names: readonly FlowName[], run: FlowRun): Promise<FlowRow[]> {
  const rows: FlowRow[] = [];
  for (const name of names) rows.push(await (await startFlow(name, run)).row);
  return rows;
}

/** Removes what the flows wrote (KYC documents). */
export function cleanUpFlowRun(run: FlowRun): void {
  if (run.made.documents) rmSync(run.made.documents.dir, { recursive: true, force: true });
  run.made.documents = undefined;
}

/** A failure is the outcome asked for only when its type is the expected one. */
function failedOutcome(err: unknown, expectedFailure?: string): { outcome: string; ok: boolean } {
  const failure = isCardIssuingError(err) ? err : undefined;
  const type = failure?.type ?? (err as Error)?.name ?? 'Error';
  if (expectedFailure && type === expectedFailure) return { outcome: `${type}, as expected`, ok: true };
  return { outcome: `${type}: ${failure?.message ?? (err as Error)?.message ?? String(err)}`, ok: false };
}

export function flowTable(rows: FlowRow[]): string {
  const cells = rows.map((r) => ({ flow: `${r.ok ? '✓' : '✗'} ${r.flow}`, 'workflow ID': r.workflowId, outcome: r.outcome, ms: r.ms }));
  return renderTable(cells, ['flow', 'workflow ID', 'outcome', 'ms'], { alignRight: ['ms'], rule: true });
}

/** The sandbox ledger's verdict: money conserved and no idempotency key applied twice. */
export async function ledgerVerdict(control: SandboxControlClient): Promise<{ ok: boolean; line: string }> {
  const ledger = await control.ledger();
  const ok = ledger.violations.length === 0;
  return {
    ok,
    line: ok
      ? `sandbox ledger: money conserved, no idempotency key applied twice (wallet ${money(ledger.wallet)})`
      : `sandbox ledger: ${ledger.violations.length} violation(s): ${JSON.stringify(ledger.violations)}`,
  };
}

/** Polls until `check` yields a value (webhooks arrive asynchronously). */
async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
