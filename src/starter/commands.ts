/**
 * The operator CLI's commands (CONTRACTS §6) as one table: each names its flags, turns them
 * into a validated plan (`parse`, before anything starts; UsageError → exit 2) and runs the
 * plan through the typed client (`run`). The runner in run.ts does the rest.
 */
import { randomUUID } from 'node:crypto';
import { createPayoutRequest, KYC_FORM_FIELDS, purchaseEsimRequest, rechargeEsimRequest } from '../provider/api';
import type { CardBinAnswer } from '../provider/answers';
import type { ProviderClient } from '../provider/client';
import { issueCardErrors, keyErrors, moneyMovementErrors } from '../shared/card-rules';
import type { IssueCardInput, MoneyMovementInput, MoneyMovementKind } from '../shared/types';
import { UsageError, assertNoErrors, cents, documentRef, flag, listFlag, readJsonObject, type Flags } from './args';
import type { CardIssuingClient, FlowHandle } from '../client';
import type { KycDocuments, OnboardCardholderInput, SendPayoutInput } from '../client';
import { phaseOf } from '../shared/statuses';
import { onboardCardholderErrors } from '../shared/kyc-rules';
import { renderFields, renderTable } from './output';
import { definedOnly } from '../shared/defined-only';
import { RECONCILE_COMMANDS } from './reconcile-commands';
import { settle } from './settle-command';

export interface CommandContext {
  /** Connects on first use: parsing never needs Temporal. */
  client(): Promise<CardIssuingClient>;
  provider(): ProviderClient;
  progress(line: string): void;
  /** The flow being awaited: named on Ctrl-C and in a failure's output. */
  following(workflowId: string): void;
}

export interface CommandOutcome {
  /** false: the flow ended in a business failure (exit 1). */
  ok: boolean;
  workflowId?: string;
  result: unknown;
  /** For people (stdout without --json); defaults to the result's fields. */
  text?: string;
}

type OptionSpec = { type: 'string' | 'boolean'; multiple?: boolean };

export interface Command<P = unknown> {
  usage: string;
  options: Record<string, OptionSpec>;
  /** Name of the one positional argument the command takes, if any (e.g. ID). */
  positional?: string;
  /** How many positional words it takes (default 1); several reach `parse` joined by spaces. */
  positionals?: number;
  parse(flags: Flags, positional: string | undefined, ctx: CommandContext): P | Promise<P>;
  run(plan: P, ctx: CommandContext): Promise<CommandOutcome>;
}

const str: OptionSpec = { type: 'string' };
const many: OptionSpec = { type: 'string', multiple: true };

/** The spec gives card ids no format: anything a path segment can carry. */
const CARD_ID = /^[^\s/?#]{1,128}$/;

/** Starts a flow, reports it, waits for its result. */
async function follow<R>(ctx: CommandContext, start: Promise<FlowHandle<R>>, waitingFor: string): Promise<{ workflowId: string; result: R }> {
  const handle = await start;
  ctx.following(handle.workflowId);
  ctx.progress(`started ${handle.workflowId}; waiting for ${waitingFor}`);
  return { workflowId: handle.workflowId, result: await handle.result() };
}

function cardIdArg(value: string | undefined, what = 'ID'): string {
  if (!value) throw new UsageError(`${what} is required (a card id)`);
  if (!CARD_ID.test(value)) throw new UsageError(`${what} must be a card id: 1-128 characters without spaces, '/', '?' or '#' (got "${value}")`);
  return value;
}

/** The caller's key, or one drawn for this call: told, so a retry under `--key` joins this call instead of moving money again. */
function keyFor(ctx: CommandContext, given: string | undefined): string {
  if (given !== undefined) return given;
  const drawn = `cli-${randomUUID()}`;
  ctx.progress(`idempotency key ${drawn}: to retry this call safely, repeat it with --key ${drawn}`);
  return drawn;
}

function keyFlag(flags: Flags): string | undefined {
  const key = flag(flags, 'key');
  if (key !== undefined) assertNoErrors(keyErrors(key), { idempotencyKey: '--key' });
  return key;
}


// --- issue-card ---------------------------------------------------------------------------

const ISSUE_CARD_FLAGS: Record<string, string> = {
  cardBinId: '--bin',
  initialAmount: '--amount',
  firstName: '--first',
  lastName: '--last',
  email: '--email',
  mobilePrefix: '--mobile-prefix',
  mobile: '--mobile',
  pin: '--pin',
  cardholderId: '--cardholder',
  billingAddress: '--billing',
  tags: '--tag',
};

const issueCard: Command<{ input: IssueCardInput; idempotencyKey?: string }> = {
  usage: 'issue-card --bin ID --amount CENTS [--first NAME --last NAME] [--email E] [--mobile-prefix +P --mobile N] [--pin NNNN] [--cardholder kyc_…] [--billing FILE.json] [--tag T]… [--key K]',
  options: {
    bin: str, amount: str, first: str, last: str, email: str, 'mobile-prefix': str, mobile: str, pin: str, cardholder: str, billing: str, tag: many, key: str,
  },
  async parse(flags, _positional, ctx) {
    const billing = flag(flags, 'billing');
    const tags = listFlag(flags, 'tag');
    const input = definedOnly<IssueCardInput>({
      cardBinId: flag(flags, 'bin', true),
      initialAmount: cents(flags, 'amount'),
      firstName: flag(flags, 'first'),
      lastName: flag(flags, 'last'),
      email: flag(flags, 'email'),
      mobilePrefix: flag(flags, 'mobile-prefix'),
      mobile: flag(flags, 'mobile'),
      pin: flag(flags, 'pin'),
      cardholderId: flag(flags, 'cardholder'),
      billingAddress: billing === undefined ? undefined : (readJsonObject(billing, 'billing') as unknown as IssueCardInput['billingAddress']),
      tags: tags.length > 0 ? tags : undefined,
    });
    assertNoErrors(issueCardErrors(input), ISSUE_CARD_FLAGS);
    const bin = await lookUpBin(ctx, input.cardBinId);
    if (bin) assertNoErrors(issueCardErrors(input, bin), ISSUE_CARD_FLAGS);
    return definedOnly({ input, idempotencyKey: keyFlag(flags) });
  },
  async run({ input, idempotencyKey }, ctx) {
    const client = await ctx.client();
    const flow = await follow(ctx, client.startIssueCard({ ...input, idempotencyKey: keyFor(ctx, idempotencyKey) }), 'the card to be ENABLE');
    return { ok: flow.result.status === 'ENABLE', ...flow };
  },
};

/**
 * The BIN's own rules (US billing address, mobile, PIN…) are checked here too, so a request the
 * workflow would refuse is refused before it starts. If the provider cannot be asked, the
 * workflow still checks them.
 */
async function lookUpBin(ctx: CommandContext, cardBinId: string): Promise<CardBinAnswer | undefined> {
  let bins: CardBinAnswer[];
  try {
    bins = await ctx.provider().listCardBins();
  } catch (err) {
    ctx.progress(`could not list BINs (${(err as Error).message}); the workflow will check the BIN's rules`);
    return undefined;
  }
  const bin = bins.find((b) => b.cardBinId === cardBinId);
  if (!bin) throw new UsageError(`--bin ${cardBinId} is not a BIN available to this project (see the bins command)`);
  return bin;
}

// --- fund / withdraw ----------------------------------------------------------------------

function moneyCommand(kind: MoneyMovementKind): Command<{ input: MoneyMovementInput }> {
  const verb = kind === 'funding' ? 'fund' : 'withdraw';
  return {
    usage: `${verb} --card ID --amount CENTS [--key K]`,
    options: { card: str, amount: str, key: str },
    parse(flags) {
      const input = definedOnly<MoneyMovementInput>({
        cardId: cardIdArg(flag(flags, 'card', true), '--card'),
        amount: cents(flags, 'amount'),
        idempotencyKey: keyFlag(flags),
      });
      assertNoErrors(moneyMovementErrors(kind, input), { cardId: '--card', amount: '--amount', idempotencyKey: '--key' });
      return { input };
    },
    async run({ input }, ctx) {
      const client = await ctx.client();
      const request = { ...input, idempotencyKey: keyFor(ctx, input.idempotencyKey) };
      ctx.following(`card/${input.cardId}`);
      ctx.progress(`${verb} ${input.cardId} through its card workflow; waiting for the ${kind} to complete`);
      const result = await (kind === 'funding' ? client.fundCard(request) : client.withdrawFromCard(request));
      return { ok: true, workflowId: `card/${input.cardId}`, result };
    },
  };
}

// --- kyc ----------------------------------------------------------------------------------

/** The form's own fields: the fileTokens come from the documents, uploaded by the workflow. */

const KYC_DOCUMENT_FLAGS = {
  'documents.idFront': '--id-front',
  'documents.idBack': '--id-back',
  'documents.selfie': '--selfie',
  'documents.addressProof': '--address-proof',
  'documents.attachments': '--attachment',
};

const kyc: Command<{ input: OnboardCardholderInput; idempotencyKey?: string }> = {
  usage: 'kyc --form FILE.json --id-front FILE [--id-back FILE] [--selfie FILE] [--address-proof FILE] --attachment FILE… [--key K]',
  options: { form: str, 'id-front': str, 'id-back': str, selfie: str, 'address-proof': str, attachment: many, key: str },
  parse(flags) {
    const form = readJsonObject(flag(flags, 'form', true), 'form');
    const optionalDoc = (name: string) => {
      const path = flag(flags, name);
      return path === undefined ? undefined : documentRef(path, name);
    };
    const documents = definedOnly<KycDocuments>({
      idFront: documentRef(flag(flags, 'id-front', true), 'id-front'),
      idBack: optionalDoc('id-back'),
      selfie: optionalDoc('selfie'),
      addressProof: optionalDoc('address-proof'),
      attachments: listFlag(flags, 'attachment').map((path) => documentRef(path, 'attachment')),
    });
    if (documents.attachments.length === 0) throw new UsageError('--attachment is required (1 to 6 files)');
    // Only the form's own fields travel: a stray key in the file (a token, a comment) is not ours to send.
    const fields = Object.fromEntries(KYC_FORM_FIELDS.filter((k) => k in form).map((k) => [k, form[k]]));
    const input = { ...fields, documents } as unknown as OnboardCardholderInput;
    const formFlags = Object.fromEntries(KYC_FORM_FIELDS.map((field) => [field, `--form field ${field}`]));
    assertNoErrors(onboardCardholderErrors(input), { ...formFlags, ...KYC_DOCUMENT_FLAGS }, '--form');
    return definedOnly({ input, idempotencyKey: keyFlag(flags) });
  },
  async run({ input, idempotencyKey }, ctx) {
    const client = await ctx.client();
    const flow = await follow(ctx, client.startOnboardCardholder({ ...input, idempotencyKey: keyFor(ctx, idempotencyKey) }), 'the KYC review');
    // A rejection is the flow's result, and for the operator a business failure.
    return { ok: flow.result.kycStatus === 'APPROVED', ...flow };
  },
};

// --- eSIM and payouts ---------------------------------------------------------------------

const esimBuy: Command<{ planNo: string; idempotencyKey?: string }> = {
  usage: 'esim-buy --plan epln_… [--key K]',
  options: { plan: str, key: str },
  parse(flags) {
    const planNo = flag(flags, 'plan', true);
    assertNoErrors(purchaseEsimRequest.errors({ planNo }), { planNo: '--plan' });
    return definedOnly({ planNo, idempotencyKey: keyFlag(flags) });
  },
  async run(input, ctx) {
    const client = await ctx.client();
    const flow = await follow(ctx, client.startPurchaseEsim({ ...input, idempotencyKey: keyFor(ctx, input.idempotencyKey) }), 'the eSIM to be issued (or refunded)');
    return { ok: phaseOf('esimOrder', flow.result.status) === 'succeeded', ...flow };
  },
};

const esimRecharge: Command<{ esimNo: string; idempotencyKey?: string }> = {
  usage: 'esim-recharge --esim esim_… [--key K]',
  options: { esim: str, key: str },
  parse(flags) {
    const esimNo = flag(flags, 'esim', true);
    assertNoErrors(rechargeEsimRequest.only('esimNo').errors({ esimNo }), { esimNo: '--esim' });
    return definedOnly({ esimNo, idempotencyKey: keyFlag(flags) });
  },
  async run(input, ctx) {
    const client = await ctx.client();
    const flow = await follow(ctx, client.startRechargeEsim({ ...input, idempotencyKey: keyFor(ctx, input.idempotencyKey) }), 'the recharge to finish');
    return { ok: phaseOf('esimOrder', flow.result.status) === 'succeeded', ...flow };
  },
};

const payout: Command<{ merOrderNo: string }> = {
  usage: 'payout --mer-order-no NO',
  options: { 'mer-order-no': str },
  parse(flags) {
    const merOrderNo = flag(flags, 'mer-order-no', true);
    assertNoErrors(createPayoutRequest.only('merOrderNo').errors({ merOrderNo }), { merOrderNo: '--mer-order-no' });
    return { merOrderNo };
  },
  async run({ merOrderNo }, ctx) {
    const client = await ctx.client();
    const flow = await follow(ctx, client.startTrackPayout({ merOrderNo }), 'the payout to reach a terminal status');
    return { ok: phaseOf('payout', flow.result.status) === 'succeeded', ...flow };
  },
};

const PAYOUT_FLAGS: Record<string, string> = {
  merOrderNo: '--mer-order-no', paymentType: '--payment-type', arriveCurrency: '--currency', arriveAmount: '--amount',
  payeeFirstName: '--first', payeeLastName: '--last', payeeAccountNo: '--account', remark: '--remark', idempotencyKey: '--key',
};

const payoutSend: Command<{ input: SendPayoutInput }> = {
  usage: 'payout-send --mer-order-no NO --payment-type TYPE --currency CUR --amount MINOR_UNITS --first NAME --last NAME --account NO [--remark TEXT] [--key K (default: the merOrderNo)]',
  options: {
    'mer-order-no': str, 'payment-type': str, currency: str, amount: str, first: str, last: str, account: str, remark: str, key: str,
  },
  parse(flags) {
    const input = definedOnly<SendPayoutInput>({
      merOrderNo: flag(flags, 'mer-order-no', true),
      paymentType: flag(flags, 'payment-type', true),
      arriveCurrency: flag(flags, 'currency', true),
      arriveAmount: cents(flags, 'amount'),
      payeeFirstName: flag(flags, 'first', true),
      payeeLastName: flag(flags, 'last', true),
      payeeAccountNo: flag(flags, 'account', true),
      remark: flag(flags, 'remark'),
      idempotencyKey: keyFlag(flags),
    });
    const { idempotencyKey: _key, ...request } = input;
    assertNoErrors(createPayoutRequest.errors(request), PAYOUT_FLAGS);
    return { input };
  },
  async run({ input }, ctx) {
    const client = await ctx.client();
    // The merchant's order number is what an operator repeats: it is the key unless one is given.
    const flow = await follow(ctx, client.startSendPayout({ ...input, idempotencyKey: input.idempotencyKey ?? input.merOrderNo }), 'the payout to reach a terminal status');
    return { ok: phaseOf('payout', flow.result.status) === 'succeeded', ...flow };
  },
};

const wallet: Command<null> = {
  usage: 'wallet',
  options: {},
  parse: () => null,
  async run(_plan, ctx) {
    return { ok: true, result: await (await ctx.client()).walletBalance() };
  },
};

const esimPlans: Command<null> = {
  usage: 'esim-plans',
  options: {},
  parse: () => null,
  async run(_plan, ctx) {
    const plans = await (await ctx.client()).esimPlans();
    return { ok: true, result: { plans }, text: renderTable(plans, ['planNo', 'name', 'priceUsd', 'dataMb', 'validityDays', 'available']) };
  },
};

const esimUsage: Command<string> = {
  usage: 'esim-usage --esim esim_…',
  options: { esim: str },
  parse(flags) {
    const esimNo = flag(flags, 'esim', true);
    assertNoErrors(rechargeEsimRequest.only('esimNo').errors({ esimNo }), { esimNo: '--esim' });
    return esimNo;
  },
  async run(esimNo, ctx) {
    ctx.progress(`reading the usage of ${esimNo} through its workflow (at most once a minute from the provider)`);
    const watch = await (await ctx.client()).esimUsage(esimNo);
    return { ok: true, workflowId: `esim/${esimNo}`, result: watch, text: renderFields({ ...watch.usage, usageReadAt: watch.usageReadAt, alerts: watch.alerts.length }) };
  },
};

// --- one card, one flow -------------------------------------------------------------------

const card: Command<string> = {
  usage: 'card ID',
  options: {},
  positional: 'ID',
  parse: (_flags, id) => cardIdArg(id),
  async run(cardId, ctx) {
    const state = await (await ctx.client()).cardState(cardId);
    const balanceReadAt = state.balanceReadAt === undefined ? undefined : new Date(state.balanceReadAt).toISOString();
    const view = { cardId, status: state.status, card: state.card, balanceReadAt, recentTransactions: state.recentTransactions, operationsApplied: state.operationsApplied };
    return { ok: true, result: view, text: renderFields({ ...state.card, status: state.status, balanceReadAt, recentTransactions: state.recentTransactions.length }) };
  },
};

function cardChange(verb: 'freeze' | 'unfreeze' | 'delete'): Command<string> {
  return {
    usage: `${verb} ID`,
    options: {},
    positional: 'ID',
    parse: (_flags, id) => cardIdArg(id),
    async run(cardId, ctx) {
      ctx.progress(`${verb} ${cardId} through its card workflow`);
      const client = await ctx.client();
      return { ok: true, result: await client[verb](cardId) };
    },
  };
}

const status: Command<string> = {
  usage: 'status WORKFLOW_ID',
  options: {},
  positional: 'WORKFLOW_ID',
  parse(_flags, id) {
    if (!id) throw new UsageError('WORKFLOW_ID is required');
    return id;
  },
  async run(workflowId, ctx) {
    return { ok: true, workflowId, result: await (await ctx.client()).status(workflowId) };
  },
};

const bins: Command<null> = {
  usage: 'bins',
  options: {},
  parse: () => null,
  async run(_plan, ctx) {
    const list = await ctx.provider().listCardBins();
    const columns = ['cardBinId', 'brand', 'issuingCountry', 'currency', 'mobile', 'email', 'supportPin', 'requireKycCardholder'];
    return { ok: true, result: { bins: list }, text: renderTable(list, columns) };
  },
};

export const COMMANDS: Record<string, Command<any>> = {
  ...RECONCILE_COMMANDS,
  bins,
  'issue-card': issueCard,
  fund: moneyCommand('funding'),
  withdraw: moneyCommand('withdrawal'),
  kyc,
  'esim-buy': esimBuy,
  'esim-recharge': esimRecharge,
  payout,
  'payout-send': payoutSend,
  wallet,
  'esim-plans': esimPlans,
  'esim-usage': esimUsage,
  card,
  freeze: cardChange('freeze'),
  unfreeze: cardChange('unfreeze'),
  delete: cardChange('delete'),
  status,
  settle,
};

export function defaultText(outcome: CommandOutcome): string {
  return outcome.text ?? renderFields(outcome.result);
}
