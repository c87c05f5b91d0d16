/**
 * One card's commands of the operator CLI (CONTRACTS §6): `card ID`, `freeze ID`, `unfreeze ID`,
 * `delete ID --yes`, `pin ID`, `reveal ID`, `contact ID …`, each through the card's workflow (an update, run one
 * at a time with the card's other operations), and `bins`, read through a worker like every
 * provider read of the CLI: the operator's machine holds no provider secret.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { contactErrors, freshnessErrors, hasErrors, pinErrors } from '../shared/card-rules';
import { definedOnly } from '../shared/defined-only';
import type { ContactInput } from '../shared/types';
import { isCardIssuingError, type CardBin } from '../client';
import { UsageError, assertNoErrors, flag, type Flags } from './args';
import { bool, cardIdArg, personalFlag, str, type Command, type CommandContext } from './command-kit';
import { renderFields, renderTable } from './output';

/** How long the CLI's own checks (the BIN's rules, the card's PIN support) wait for a worker before leaving them to the workflow. */
const CHECK_TIMEOUT_MS = 15_000;

/** `card ID [--max-age-ms N]`: the card's view, its balance read from the provider first when older than N ms (default the client's 5,000) or a movement happened since. */
const card: Command<{ cardId: string; maxAgeMs?: number }> = {
  usage: 'card ID [--max-age-ms N]',
  description: 'Show a card\'s view and balance; the balance is read from the provider first when older than --max-age-ms (default 5,000) or moved since.',
  example: 'card $CARD_ID --max-age-ms 0',
  options: { 'max-age-ms': str },
  positional: 'ID',
  parse: (flags, id) => ({ cardId: cardIdArg(id), ...definedOnly({ maxAgeMs: maxAgeFlag(flags) }) }),
  async run({ cardId, maxAgeMs }, ctx) {
    const state = await (await ctx.client()).cardState(cardId, definedOnly({ maxAgeMs }));
    const balanceReadAt = state.balanceReadAt === undefined ? undefined : new Date(state.balanceReadAt).toISOString();
    const freshness = { balanceReadAt, balanceAgeMs: state.balanceAgeMs, movedSinceBalanceRead: state.movedSinceBalanceRead ?? false };
    const view = { cardId, status: state.status, card: state.card, ...freshness, recentTransactions: state.recentTransactions, operationsApplied: state.operationsApplied };
    return { ok: true, workflowId: `card/${cardId}`, result: view, text: renderFields({ ...state.card, status: state.status, ...freshness, recentTransactions: state.recentTransactions.length }) };
  },
};

/** `--max-age-ms`: a whole number of milliseconds from 0 to a day (shared/card-rules.ts freshnessErrors). */
function maxAgeFlag(flags: Flags): number | undefined {
  const given = flag(flags, 'max-age-ms');
  if (given === undefined) return undefined;
  const errors = /^\d{1,9}$/.test(given) ? freshnessErrors({ maxAgeMs: Number(given) }) : { maxAgeMs: 'must be a whole number of milliseconds' };
  if (hasErrors(errors)) throw new UsageError(`--max-age-ms ${errors.maxAgeMs} (got "${given}")`);
  return Number(given);
}

function cardChange(verb: 'freeze' | 'unfreeze'): Command<string> {
  return {
    usage: `${verb} ID`,
    description: verb === 'freeze' ? "Freeze a card, through its workflow (unfreeze undoes it)." : 'Unfreeze a frozen card, through its workflow.',
    example: `${verb} $CARD_ID`,
    options: {},
    positional: 'ID',
    parse: (_flags, id) => cardIdArg(id),
    async run(cardId, ctx) {
      ctx.progress(`${verb} ${cardId} through its card workflow`);
      return { ok: true, workflowId: `card/${cardId}`, result: await (await ctx.client())[verb](cardId) };
    },
  };
}

/** Permanently closes the card (its balance returns to the wallet): only when told twice. */
const deleteCard: Command<string> = {
  usage: 'delete ID --yes',
  description: 'Close a card for good (its balance returns to the wallet); nothing is done without --yes.',
  example: 'delete $CARD_ID --yes',
  options: { yes: bool },
  positional: 'ID',
  parse(flags, id) {
    const cardId = cardIdArg(id);
    if (flags.yes !== true) throw new UsageError(`delete closes card ${cardId} for good (its balance returns to the wallet); nothing was done: repeat with --yes`);
    return cardId;
  },
  async run(cardId, ctx) {
    ctx.progress(`deleting ${cardId} through its card workflow`);
    return { ok: true, workflowId: `card/${cardId}`, result: await (await ctx.client()).delete(cardId) };
  },
};

/**
 * The new PIN never travels as a flag (shell history, the process list): it is read from the
 * terminal without echo (twice), or as one line of stdin. It is checked here (4 digits, not one
 * digit repeated) and against the card's BIN, sealed by the client to the workers' PIN key
 * (PIN_SEAL_PUBLIC_KEY) before it leaves this process, and printed nowhere.
 */
const pin: Command<{ cardId: string; pin: string }> = {
  usage: 'pin ID',
  description: 'Set a card\'s PIN, typed without echo (twice) or one line of stdin, sealed before it leaves; never a flag.',
  example: 'pin $CARD_ID',
  options: {},
  positional: 'ID',
  async parse(_flags, id, ctx) {
    const cardId = cardIdArg(id);
    const given = (await ctx.readSecret(`new PIN for card ${cardId}: `, { confirm: true })).trim();
    assertNoErrors(pinErrors(given), { pin: 'the PIN' });
    await assertSupportsPin(ctx, cardId);
    return { cardId, pin: given };
  },
  async run(plan, ctx) {
    ctx.progress(`setting the PIN of ${plan.cardId} through its card workflow`);
    return { ok: true, workflowId: `card/${plan.cardId}`, result: await (await ctx.client()).setPin(plan.cardId, plan.pin) };
  },
};

/**
 * The card's full number, CVV and expiry for an operator at a terminal. The client reveals it under
 * a one-time key of this command's, so no history or other key opens it; it is printed only to a
 * terminal. A pipe or a file (a CI log, a shell's scrollback saved) gets it only when asked for by
 * name: --json --show-number. Refused before anything is read.
 */
const reveal: Command<string> = {
  usage: 'reveal ID [--json --show-number]',
  description: 'Show a card\'s full number, CVV and expiry, to a terminal only (to a pipe or file only with --json --show-number).',
  example: 'reveal $CARD_ID',
  options: { 'show-number': bool },
  positional: 'ID',
  parse(flags, id, ctx) {
    const cardId = cardIdArg(id);
    const asked = flags['show-number'] === true;
    if (ctx.output.json && !asked) throw new UsageError('reveal --json writes the card number only when asked: add --show-number (nothing was read)');
    if (!ctx.output.json && asked) throw new UsageError('--show-number goes with --json: a terminal is shown the number without it');
    if (!ctx.output.json && !ctx.output.terminal) {
      throw new UsageError('reveal prints a card number only to a terminal, and stdout is not one: nothing was read (to write it to a pipe or file, ask by name: --json --show-number)');
    }
    return cardId;
  },
  async run(cardId, ctx) {
    ctx.progress(`revealing ${cardId} through its card workflow, sealed to this command's one-time key`);
    const card = await (await ctx.client()).revealSensitive(cardId);
    const expiry = `${String(card.expiryMonth).padStart(2, '0')}/${card.expiryYear}`;
    return { ok: true, workflowId: `card/${cardId}`, result: card, text: renderFields({ cardId, cardNumber: card.cardNumber, cvv: card.cvv, expiry }) };
  },
};

/** A card whose workflow knows its BIN takes no PIN is refused here; one it cannot tell about is left to the provider. */
async function assertSupportsPin(ctx: CommandContext, cardId: string): Promise<void> {
  const client = await ctx.client();
  const state = await client.cardState(cardId, { timeout: CHECK_TIMEOUT_MS }).catch((err: unknown) => {
    if (err instanceof WorkflowNotFoundError || isCardIssuingError(err)) return undefined;
    throw err;
  });
  if (state?.card?.supportPin === false) throw new UsageError(`card ${cardId} cannot take a PIN: its BIN${state.card.cardBinId ? ` ${state.card.cardBinId}` : ''} has supportPin false`);
}

const CONTACT_FLAGS = { email: '--email', mobilePrefix: '--mobile-prefix', mobile: '--mobile' };

const contact: Command<{ cardId: string; contact: ContactInput }> = {
  usage: 'contact ID [--email E|-|@FILE] [--mobile-prefix +P] [--mobile N|-|@FILE]   (personal data: - reads stdin, @FILE a file)',
  description: 'Change a card\'s email or mobile number (personal data: - reads stdin, @FILE a file).',
  example: 'contact $CARD_ID --mobile-prefix +44 --mobile @mobile.txt',
  options: { email: str, 'mobile-prefix': str, mobile: str },
  positional: 'ID',
  async parse(flags, id, ctx) {
    const cardId = cardIdArg(id);
    const given = definedOnly<ContactInput>({
      email: await personalFlag(flags, 'email', ctx),
      mobilePrefix: flag(flags, 'mobile-prefix'),
      mobile: await personalFlag(flags, 'mobile', ctx),
    });
    if (Object.keys(given).length === 0) throw new UsageError('contact needs at least one of --email, --mobile-prefix, --mobile');
    assertNoErrors(contactErrors(given), CONTACT_FLAGS);
    return { cardId, contact: given };
  },
  async run(plan, ctx) {
    // The card's view holds no contact data: what changed is named, not shown.
    ctx.progress(`changing ${Object.keys(plan.contact).join(', ')} of ${plan.cardId} through its card workflow`);
    const view = await (await ctx.client()).updateContact(plan.cardId, plan.contact);
    return { ok: true, workflowId: `card/${plan.cardId}`, result: { ...view, changed: Object.keys(plan.contact) } };
  },
};

const bins: Command<{ refresh: boolean }> = {
  usage: 'bins [--refresh]',
  description: 'List the BINs the project may issue from and what each requires (--refresh: ask the provider now, not the list kept up to 24 h).',
  example: 'bins --refresh',
  options: { refresh: bool },
  parse: (flags) => ({ refresh: flags.refresh === true }),
  async run({ refresh }, ctx) {
    ctx.progress(`reading the BINs through a worker${refresh ? ' (asking the provider now)' : ' (its list is kept up to 24 h)'}`);
    const list = await (await ctx.client()).cardBins({ refresh });
    const columns = ['cardBinId', 'brand', 'issuingCountry', 'currency', 'mobile', 'email', 'supportPin', 'requireKycCardholder'];
    return { ok: true, result: { bins: list }, text: renderTable(list, columns) };
  },
};

/**
 * The BIN `--bin` names, read through a worker, so issue-card refuses a request its rules forbid
 * (US billing address, mobile, PIN…) before it starts: exit 2. A BIN missing from the worker's
 * cached list is looked for once more in a fresh one before it is refused. When no worker answers,
 * the issueCard workflow checks the same rules.
 */
export async function lookUpBin(ctx: CommandContext, cardBinId: string): Promise<CardBin | undefined> {
  const client = await ctx.client();
  const find = async (refresh: boolean) => (await client.cardBins({ refresh }, { timeout: CHECK_TIMEOUT_MS })).find((b) => b.cardBinId === cardBinId);
  let bin: CardBin | undefined;
  try {
    bin = (await find(false)) ?? (await find(true));
  } catch (err) {
    if (!isCardIssuingError(err)) throw err;
    ctx.progress(`could not read the BINs through a worker (${err.type}: ${err.message}); the workflow will check the BIN's rules`);
    return undefined;
  }
  if (!bin) throw new UsageError(`--bin ${cardBinId} is not a BIN available to this project (see the bins command)`);
  return bin;
}

export const CARD_COMMANDS: Record<string, Command<any>> = {
  bins,
  card,
  freeze: cardChange('freeze'),
  unfreeze: cardChange('unfreeze'),
  delete: deleteCard,
  pin,
  reveal,
  contact,
};
