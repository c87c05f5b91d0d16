/**
 * The operator CLI's commands (CONTRACTS §6) as one table: each names its flags, turns them
 * into a validated plan (`parse`, before anything starts; UsageError → exit 2) and runs the
 * plan through the typed client (`run`). The runner in run.ts does the rest. The flows that
 * move money and the reads of the wallet and eSIMs are here; one card's commands are in
 * card-commands.ts, any flow's (status, flows, operation, cancel, terminate) in flow-commands.ts,
 * reconciliation's in reconcile-commands.ts, settle in settle-command.ts, a held payout's
 * approval in payout-approval-commands.ts.
 */
import { createPayoutRequest, KYC_FORM_FIELDS, purchaseEsimRequest, rechargeEsimRequest } from '../provider-api';
import { issueCardRequestErrors, moneyMovementErrors } from '../shared/card-rules';
import type { IssueCardRequestInput, MoneyMovementInput, MoneyMovementKind } from '../shared/types';
import { UsageError, assertNoErrors, cents, flag, listFlag, localDocument, readJsonObject, type LocalDocument } from './args';
import type { EsimOrderResult, KycDocuments, OnboardCardholderInput, PayoutResult, SendPayoutInput } from '../client';
import { phaseOf } from '../shared/statuses';
import { documentNameRule, onboardCardholderErrors, onboardingDocumentName } from '../shared/kyc-rules';
import { onboardingWorkflowId } from '../client/requests';
import { DocumentStore } from '../documents/store';
import { renderFields, renderTable } from './output';
import { definedOnly } from '../shared/defined-only';
import { RECONCILE_COMMANDS } from './reconcile-commands';
import { openItems, settle } from './settle-command';
import { CARD_COMMANDS, lookUpBin } from './card-commands';
import { FLOW_COMMANDS } from './flow-commands';
import { DEPLOY_COMMANDS } from './deploy-commands';
import { NEXUS_COMMANDS } from './nexus-command';
import { PAYOUT_APPROVAL_COMMANDS } from './payout-approval-commands';
import { cardIdArg, keyFlag, keyFor, leftRunning, many, personalFlag, startedFlow, str, type Command, type CommandOutcome, type Judge } from './command-kit';

export type { Command, CommandContext, CommandOutcome, OutcomeFailure } from './command-kit';

// --- issue-card ---------------------------------------------------------------------------

const ISSUE_CARD_FLAGS: Record<string, string> = {
  cardBinId: '--bin',
  initialAmount: '--amount',
  firstName: '--first',
  lastName: '--last',
  email: '--email',
  mobilePrefix: '--mobile-prefix',
  mobile: '--mobile',
  pin: '--pin-stdin',
  cardholderId: '--cardholder',
  billingAddress: '--billing',
  tags: '--tag',
};

const issueCard: Command<{ input: IssueCardRequestInput; idempotencyKey?: string }> = {
  starts: true,
  usage: 'issue-card --bin ID --amount CENTS [--first NAME --last NAME] [--email E] [--mobile-prefix +P --mobile N] [--pin-stdin] [--cardholder kyc_…] [--billing FILE.json] [--tag T]… [--key K]',
  description: 'Issue a virtual card from a BIN with an initial balance in cents, and wait until the provider enables it.',
  example: 'issue-card --bin bin_visa_basic --amount 5000 --first Ada --last Lovelace --key order-1001',
  options: {
    bin: str, amount: str, first: str, last: str, email: str, 'mobile-prefix': str, mobile: str, 'pin-stdin': { type: 'boolean' }, pin: str, cardholder: str, billing: str, tag: many, key: str,
  },
  async parse(flags, _positional, ctx) {
    // A PIN is never a flag's value: the process list, shell history and CI logs would show it (CONTRACTS §6).
    if (flags.pin !== undefined) throw new UsageError('--pin takes no value: a PIN is never a flag (ps, shell history, CI logs); use --pin-stdin, which reads it from the terminal without echo, or one line of stdin');
    const billing = flag(flags, 'billing');
    const tags = listFlag(flags, 'tag');
    const input = definedOnly<IssueCardRequestInput>({
      cardBinId: flag(flags, 'bin', true),
      initialAmount: cents(flags, 'amount'),
      firstName: flag(flags, 'first'),
      lastName: flag(flags, 'last'),
      email: flag(flags, 'email'),
      mobilePrefix: flag(flags, 'mobile-prefix'),
      mobile: flag(flags, 'mobile'),
      pin: flags['pin-stdin'] === true ? (await ctx.readSecret('PIN of the new card: ', { confirm: true })).trim() : undefined,
      cardholderId: flag(flags, 'cardholder'),
      billingAddress: billing === undefined ? undefined : (readJsonObject(billing, 'billing') as unknown as IssueCardRequestInput['billingAddress']),
      tags: tags.length > 0 ? tags : undefined,
    });
    assertNoErrors(issueCardRequestErrors(input), ISSUE_CARD_FLAGS);
    // The BIN's own rules (US billing address, mobile, PIN…), read through a worker: refused here, nothing started.
    const bin = await lookUpBin(ctx, input.cardBinId);
    if (bin) assertNoErrors(issueCardRequestErrors(input, bin), ISSUE_CARD_FLAGS);
    return definedOnly({ input, idempotencyKey: keyFlag(flags) });
  },
  async run({ input, idempotencyKey }, ctx) {
    const client = await ctx.client();
    return startedFlow(ctx, client.startIssueCard({ ...input, idempotencyKey: keyFor(ctx, idempotencyKey) }), 'the card to be ENABLE', (card) =>
      card.status === 'ENABLE' ? undefined : { type: 'CardNotEnabled', message: `card ${card.cardId} is ${card.status}`, details: [{ cardId: card.cardId, status: card.status }] },
    );
  },
};

// --- fund / withdraw ----------------------------------------------------------------------

function moneyCommand(kind: MoneyMovementKind): Command<{ input: MoneyMovementInput }> {
  const verb = kind === 'funding' ? 'fund' : 'withdraw';
  return {
    starts: true,
    usage: `${verb} --card ID --amount CENTS [--key K]`,
    description: kind === 'funding'
      ? "Move money from the project's wallet onto a card, in cents, through the card's workflow; repeat with the same --key to retry safely."
      : "Move money from a card back to the project's wallet, in cents, through the card's workflow; repeat with the same --key to retry safely.",
    example: `${verb} --card $CARD_ID --amount ${kind === 'funding' ? 2500 : 1000} --key ${kind === 'funding' ? 'topup-1001' : 'refund-1001'}`,
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
      if (!ctx.wait) {
        // Accepted by the card's workflow, which runs it behind the card's other operations.
        const submitted = await (kind === 'funding' ? client.submitFundCard(request) : client.submitWithdrawFromCard(request));
        ctx.progress(`card ${input.cardId} accepted the ${kind} (update ${submitted.updateId})`);
        return leftRunning(ctx, submitted.workflowId, { ...submitted }, `its outcome: repeat this command with --key ${request.idempotencyKey}`);
      }
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

const kyc: Command<{ input: OnboardCardholderInput; idempotencyKey: string }> = {
  starts: true,
  usage: 'kyc --form FILE.json --id-front FILE [--id-back FILE] [--selfie FILE] [--address-proof FILE] --attachment FILE… [--key K]',
  description: 'Onboard a KYC cardholder from a form and document files, and wait for the review (APPROVED or REJECTED).',
  example: 'kyc --form cardholder.json --id-front id-front.jpg --selfie selfie.jpg --attachment proof-of-address.pdf',
  options: { form: str, 'id-front': str, 'id-back': str, selfie: str, 'address-proof': str, attachment: many, key: str },
  parse(flags, _positional, ctx) {
    const form = readJsonObject(flag(flags, 'form', true), 'form');
    const files: LocalDocument[] = [];
    const local = (name: string, path: string) => {
      const file = localDocument(path, name);
      files.push(file);
      return file.ref;
    };
    const optionalDoc = (name: string) => {
      const path = flag(flags, name);
      return path === undefined ? undefined : local(name, path);
    };
    const documents = definedOnly<KycDocuments>({
      idFront: local('id-front', flag(flags, 'id-front', true)),
      idBack: optionalDoc('id-back'),
      selfie: optionalDoc('selfie'),
      addressProof: optionalDoc('address-proof'),
      attachments: listFlag(flags, 'attachment').map((path) => local('attachment', path)),
    });
    if (documents.attachments.length === 0) throw new UsageError('--attachment is required (1 to 6 files)');
    // Only the form's own fields travel: a stray key in the file (a token, a comment) is not ours to send.
    const fields = Object.fromEntries(KYC_FORM_FIELDS.filter((k) => k in form).map((k) => [k, form[k]]));
    const input = { ...fields, documents } as unknown as OnboardCardholderInput;
    const formFlags = Object.fromEntries(KYC_FORM_FIELDS.map((field) => [field, `--form field ${field}`]));
    assertNoErrors(onboardCardholderErrors(input), { ...formFlags, ...KYC_DOCUMENT_FLAGS }, '--form');
    // Valid: the files go into the workers' documents store, in the folder of this onboarding (its
    // workflow ID: only it may read them), under names of their content (writing one twice changes nothing).
    const idempotencyKey = keyFor(ctx, keyFlag(flags));
    const folder = onboardingWorkflowId(idempotencyKey);
    for (const file of files) file.ref.name = onboardingDocumentName(folder, file.ref.name.split('/').pop()!);
    const named = documentNameRule(onboardingDocumentName(folder, 'x'));
    if (named) throw new UsageError(`--key ${idempotencyKey} cannot name the onboarding's folder of documents (${folder}/): its documents' names ${named}`);
    const store = new DocumentStore(ctx.config().documentsDir);
    try {
      for (const file of files) store.write(file.ref.name, file.bytes);
    } catch (err) {
      throw new UsageError(`KYC_DOCUMENTS_DIR ${store.root} cannot take the documents (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): the CLI copies them into the workers' documents store, so it needs the same folder`);
    }
    return { input, idempotencyKey };
  },
  async run({ input, idempotencyKey }, ctx) {
    const client = await ctx.client();
    // A rejection is the flow's result, and for the operator a business failure.
    return startedFlow(ctx, client.startOnboardCardholder({ ...input, idempotencyKey }), 'the KYC review', (r) =>
      r.kycStatus === 'APPROVED' ? undefined : { type: 'KycRejected', message: `cardholder ${r.id} is ${r.kycStatus}${r.reason ? `: ${r.reason}` : ''}`, details: [{ id: r.id, kycStatus: r.kycStatus, reason: r.reason }] },
    );
  },
};

// --- eSIM and payouts ---------------------------------------------------------------------

/** An eSIM order that ended otherwise than issued (the flow fails EsimRefunded for a refund; any other end is told here). */
const esimIssued: Judge<EsimOrderResult> = (order) =>
  phaseOf('esimOrder', order.status) === 'succeeded' ? undefined : { type: 'EsimNotIssued', message: `order ${order.orderNo} is ${order.status}`, details: [{ orderNo: order.orderNo, status: order.status }] };

/** A payout that ended otherwise than paid (FAILED, cancelled): the flow's result, a failure for the operator. */
const payoutPaid: Judge<PayoutResult> = (payout) =>
  phaseOf('payout', payout.status) === 'succeeded' ? undefined : { type: 'PayoutNotCompleted', message: `payout ${payout.merOrderNo} ended ${payout.status}`, details: [{ merOrderNo: payout.merOrderNo, status: payout.status }] };

const esimBuy: Command<{ planNo: string; idempotencyKey?: string }> = {
  starts: true,
  usage: 'esim-buy --plan epln_… [--key K]',
  description: 'Buy an eSIM on a plan (charged to the wallet), and wait until it is issued or refunded.',
  example: 'esim-buy --plan epln_global_1gb --key esim-order-77',
  options: { plan: str, key: str },
  parse(flags) {
    const planNo = flag(flags, 'plan', true);
    assertNoErrors(purchaseEsimRequest.errors({ planNo }), { planNo: '--plan' });
    return definedOnly({ planNo, idempotencyKey: keyFlag(flags) });
  },
  async run(input, ctx) {
    const client = await ctx.client();
    return startedFlow(ctx, client.startPurchaseEsim({ ...input, idempotencyKey: keyFor(ctx, input.idempotencyKey) }), 'the eSIM to be issued (or refunded)', esimIssued);
  },
};

const esimRecharge: Command<{ esimNo: string; idempotencyKey?: string }> = {
  starts: true,
  usage: 'esim-recharge --esim esim_… [--key K]',
  description: 'Renew an eSIM\'s current plan (charged to the wallet), and wait for the recharge to finish.',
  example: 'esim-recharge --esim esim_8fK2mQx9Lw3pTz4R',
  options: { esim: str, key: str },
  parse(flags) {
    const esimNo = flag(flags, 'esim', true);
    assertNoErrors(rechargeEsimRequest.only('esimNo').errors({ esimNo }), { esimNo: '--esim' });
    return definedOnly({ esimNo, idempotencyKey: keyFlag(flags) });
  },
  async run(input, ctx) {
    const client = await ctx.client();
    return startedFlow(ctx, client.startRechargeEsim({ ...input, idempotencyKey: keyFor(ctx, input.idempotencyKey) }), 'the recharge to finish', esimIssued);
  },
};

const payout: Command<{ merOrderNo: string }> = {
  starts: true,
  usage: 'payout --mer-order-no NO',
  description: 'Follow an existing payout by its merOrderNo until its status is terminal (moves nothing).',
  example: 'payout --mer-order-no PO-2026-0001',
  options: { 'mer-order-no': str },
  parse(flags) {
    const merOrderNo = flag(flags, 'mer-order-no', true);
    assertNoErrors(createPayoutRequest.only('merOrderNo').errors({ merOrderNo }), { merOrderNo: '--mer-order-no' });
    return { merOrderNo };
  },
  async run({ merOrderNo }, ctx) {
    const client = await ctx.client();
    return startedFlow(ctx, client.startTrackPayout({ merOrderNo }), 'the payout to reach a terminal status', payoutPaid);
  },
};

const PAYOUT_FLAGS: Record<string, string> = {
  merOrderNo: '--mer-order-no', paymentType: '--payment-type', arriveCurrency: '--currency', arriveAmount: '--amount',
  payeeFirstName: '--first', payeeLastName: '--last', payeeAccountNo: '--account', remark: '--remark', idempotencyKey: '--key',
};

const payoutSend: Command<{ input: SendPayoutInput }> = {
  starts: true,
  usage: 'payout-send --mer-order-no NO --payment-type TYPE --currency CUR --amount MINOR_UNITS --first NAME --last NAME --account NO|-|@FILE [--remark TEXT] [--key K (default: the merOrderNo)]   (personal data: - reads stdin, @FILE a file)',
  description: 'Send a payout from the wallet to a payee\'s account, and wait until its status is terminal.',
  example: 'payout-send --mer-order-no PO-2026-0001 --payment-type BANK_TRANSFER --currency EUR --amount 12500 --first Ada --last Lovelace --account @payee-account.txt',
  options: {
    'mer-order-no': str, 'payment-type': str, currency: str, amount: str, first: str, last: str, account: str, remark: str, key: str,
  },
  async parse(flags, _positional, ctx) {
    const input = definedOnly<SendPayoutInput>({
      merOrderNo: flag(flags, 'mer-order-no', true),
      paymentType: flag(flags, 'payment-type', true),
      arriveCurrency: flag(flags, 'currency', true),
      arriveAmount: cents(flags, 'amount'),
      payeeFirstName: await personalFlag(flags, 'first', ctx, true),
      payeeLastName: await personalFlag(flags, 'last', ctx, true),
      payeeAccountNo: await personalFlag(flags, 'account', ctx, true),
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
    return startedFlow(ctx, client.startSendPayout({ ...input, idempotencyKey: input.idempotencyKey ?? input.merOrderNo }), 'the payout to reach a terminal status', payoutPaid);
  },
};

const wallet: Command<null> = {
  usage: 'wallet',
  description: 'Read the project\'s wallet balance (through a worker).',
  example: 'wallet --json',
  options: {},
  parse: () => null,
  async run(_plan, ctx) {
    return { ok: true, result: await (await ctx.client()).walletBalance() };
  },
};

const esimPlans: Command<null> = {
  usage: 'esim-plans',
  description: 'List the eSIM plans on offer, with their prices (through a worker).',
  example: 'esim-plans',
  options: {},
  parse: () => null,
  async run(_plan, ctx) {
    const plans = await (await ctx.client()).esimPlans();
    return { ok: true, result: { plans }, text: renderTable(plans, ['planNo', 'name', 'priceUsd', 'dataMb', 'validityDays', 'available']) };
  },
};

const esimUsage: Command<string> = {
  usage: 'esim-usage --esim esim_…',
  description: 'Read an eSIM\'s data usage, synced from the provider at most once a minute.',
  example: 'esim-usage --esim esim_8fK2mQx9Lw3pTz4R',
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

/** Every command, in the order `--help` lists them: a card's life first, then money and orders, flows and open items, operations. */
export const COMMANDS: Record<string, Command<any>> = {
  bins: CARD_COMMANDS.bins,
  'issue-card': issueCard,
  fund: moneyCommand('funding'),
  withdraw: moneyCommand('withdrawal'),
  ...CARD_COMMANDS,
  kyc,
  wallet,
  'payout-send': payoutSend,
  payout,
  ...PAYOUT_APPROVAL_COMMANDS,
  'esim-plans': esimPlans,
  'esim-buy': esimBuy,
  'esim-recharge': esimRecharge,
  'esim-usage': esimUsage,
  ...FLOW_COMMANDS,
  open: openItems,
  settle,
  ...RECONCILE_COMMANDS,
  ...DEPLOY_COMMANDS,
  ...NEXUS_COMMANDS,
};

export function defaultText(outcome: CommandOutcome): string {
  return outcome.text ?? renderFields(outcome.result);
}
