/**
 * A card action's capability (issue 50; docs/security.md, "Who may act on a card"): holding the
 * payload key, reaching the queue or knowing a card's ID grants nothing. A reveal, a PIN, a delete,
 * a freeze, an unfreeze or a contact change acts only on a request carrying a capability that an
 * authorised service signed (Ed25519, a key on the workers' allow-list), bound to the card, the
 * action, the request's own arguments and an expiry, and used once per card.
 *
 * Pure, no crypto: the card workflow's validators check the binding here before an update is
 * accepted (so a bare update never enters history); the signature is checked by the worker, in the
 * activity that acts, before any provider call (codec/card-capability.ts).
 */
import { canonicalJson } from './canonical-json';
import type { FieldErrors } from './failures';
import { KEY_ID_PATTERN, KEY_ID_RULE } from './key-id';
import { sha256Hex } from './sha256';

/** The card actions that need a capability: revealSensitive, setPin, updateContact, freezeCard, unfreezeCard, deleteCard. */
export const CARD_ACTIONS = ['reveal', 'pin', 'contact', 'freeze', 'unfreeze', 'delete'] as const;
/** One of CARD_ACTIONS. */
export type CardAction = (typeof CARD_ACTIONS)[number];

/** A signed permission for one action on one card with one request, until `exp` (docs/security.md, "Who may act on a card"). */
export interface CardCapability {
  /** The format's version. */
  v: 1;
  /** The signing key's id on the workers' allow-list (CARD_ACTION_TRUSTED_KEYS). */
  keyId: string;
  /** Who asked, as the signing service names them (an operator, a service account): the audit record's "who". */
  sub: string;
  /** The card it allows the action on. */
  cardId: string;
  /** The action it allows. */
  action: CardAction;
  /** Epoch ms; at most CAPABILITY_MAX_TTL_MS ahead of the workflow's clock when the update arrives. */
  exp: number;
  /** Fresh per capability: a card accepts each nonce once. */
  nonce: string;
  /** SHA-256 (hex) of the request's arguments without the capability: a capability for one PIN box or public key serves no other. */
  args: string;
  /** Ed25519 over capabilityMessage(), base64. */
  sig: string;
}

/** A card action's request as it travels: its arguments and the capability that allows it. */
export type WithCapability<A extends object = object> = A & { capability: CardCapability };

/** Long enough for a call's retries, short enough that one copied from history is useless. */
export const CAPABILITY_MAX_TTL_MS = 5 * 60 * 1000;
/** What a capability's `sub` may be: a readable name, never identity data. */
const SUBJECT_PATTERN = /^[A-Za-z0-9_.@:/-]{1,128}$/;
const NONCE_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;
const DIGEST_PATTERN = /^[0-9a-f]{64}$/;
const SIG_PATTERN = /^[A-Za-z0-9+/]{86}==$/;

export const CAPABILITY_RULE =
  'is required: a card action capability signed by an authorised service (the typed client and the CLI make it from CARD_ACTION_SIGNING_KEY); holding the payload key grants nothing';

/** The request's arguments as the capability binds them: everything but the capability itself. */
export function capabilityArgsDigest(request: object | undefined): string {
  const { capability: _ignored, ...args } = (request ?? {}) as Record<string, unknown>;
  return sha256Hex(canonicalJson(args));
}

/** The bytes the signature covers (UTF-8 of this string): every field but the signature, in a fixed order. */
export function capabilityMessage(c: Omit<CardCapability, 'sig'>): string {
  return ['card-issuing/card-action/v1', c.keyId, c.sub, c.cardId, c.action, String(c.exp), c.nonce, c.args].join('\n');
}

/**
 * Field errors of a request's capability for `cardId` and `action`: its shape, its binding (card,
 * action, arguments) and, given `now`, its expiry. Says nothing of the signature, which only the
 * worker checks.
 */
export function capabilityErrors(request: unknown, expected: { cardId: string; action: CardAction; now?: number }): FieldErrors {
  const cap = capabilityOf(request);
  if (cap === undefined) return { capability: CAPABILITY_RULE };
  const errors = signedFieldErrors(cap, request, expected.now);
  if (cap.cardId !== expected.cardId) errors['capability.cardId'] = `must be this card (${expected.cardId}): a capability serves the card it was made for`;
  if (cap.action !== expected.action) errors['capability.action'] = `must be "${expected.action}": a capability serves the action it was made for`;
  return ordered(errors);
}

type LooseCapability = Partial<Record<keyof CardCapability | keyof PayoutCapability, unknown>>;

function capabilityOf(request: unknown): LooseCapability | undefined {
  const cap = (request as { capability?: unknown } | undefined)?.capability;
  return typeof cap !== 'object' || cap === null || Array.isArray(cap) ? undefined : (cap as LooseCapability);
}

/** The rules every signed capability meets, card or payout: version, key id, subject, expiry, nonce, arguments' digest, signature's shape. */
function signedFieldErrors(cap: LooseCapability, request: unknown, now: number | undefined): FieldErrors {
  const errors: FieldErrors = {};
  if (cap.v !== 1) errors['capability.v'] = 'must be 1';
  if (typeof cap.keyId !== 'string' || !KEY_ID_PATTERN.test(cap.keyId)) errors['capability.keyId'] = KEY_ID_RULE;
  if (typeof cap.sub !== 'string' || !SUBJECT_PATTERN.test(cap.sub)) errors['capability.sub'] = 'must be 1-128 characters of [A-Za-z0-9_.@:/-]';
  if (typeof cap.exp !== 'number' || !Number.isSafeInteger(cap.exp)) errors['capability.exp'] = 'must be an expiry in epoch milliseconds';
  else if (now !== undefined && cap.exp <= now) errors['capability.exp'] = 'has passed: ask for a new capability';
  else if (now !== undefined && cap.exp > now + CAPABILITY_MAX_TTL_MS) errors['capability.exp'] = `must be at most ${CAPABILITY_MAX_TTL_MS / 60000} minutes ahead`;
  if (typeof cap.nonce !== 'string' || !NONCE_PATTERN.test(cap.nonce)) errors['capability.nonce'] = 'must be 16-64 characters of [A-Za-z0-9_-]';
  if (typeof cap.args !== 'string' || !DIGEST_PATTERN.test(cap.args)) errors['capability.args'] = 'must be the SHA-256 (hex) of the request without its capability';
  else if (cap.args !== capabilityArgsDigest(request as object)) errors['capability.args'] = 'does not match this request: a capability serves the arguments it was made for';
  if (typeof cap.sig !== 'string' || !SIG_PATTERN.test(cap.sig)) errors['capability.sig'] = 'must be an Ed25519 signature (64 bytes in base64)';
  return errors;
}

/** Field errors in the order the capability's fields are listed (the first one is what a refusal names first). */
function ordered(errors: FieldErrors): FieldErrors {
  const order = ['capability.v', 'capability.keyId', 'capability.sub', 'capability.cardId', 'capability.workflowId', 'capability.action', 'capability.exp', 'capability.nonce', 'capability.args', 'capability.sig'];
  const rank = (k: string) => (order.includes(k) ? order.indexOf(k) : order.length);
  return Object.fromEntries(Object.entries(errors).sort(([a], [b]) => rank(a) - rank(b)));
}

// --- Payout approvals ---------------------------------------------------------------------------

/**
 * What an operator may decide of a payout held for approval (a Nexus caller's payout above its
 * `payoutApprovalAbove`: docs/nexus.md, "Payouts that need an approval"). Signed like a card action,
 * with its own domain (payoutCapabilityMessage), so that no card capability serves a payout nor the reverse.
 */
export const PAYOUT_ACTIONS = ['approvePayout', 'rejectPayout'] as const;
/** One of PAYOUT_ACTIONS. */
export type PayoutAction = (typeof PAYOUT_ACTIONS)[number];

/** A signed decision on one payout flow (its workflow ID), bound by `args` to its run, merOrderNo, amount and currency. */
export interface PayoutCapability extends Omit<CardCapability, 'cardId' | 'action'> {
  /** The payout flow it decides (`send-payout/<key>`). */
  workflowId: string;
  action: PayoutAction;
}

/** What an operator approves or rejects: one run of one payout of one amount. Its capability binds every field. */
export interface PayoutDecision {
  runId: string;
  merOrderNo: string;
  /** Minor units of arriveCurrency, as the payout asks. */
  arriveAmount: number;
  arriveCurrency: string;
  /** Why, in the operator's words (audit); at most PAYOUT_NOTE_MAX characters. */
  note?: string;
}

export type WithPayoutCapability<A extends object = PayoutDecision> = A & { capability: PayoutCapability };

export const PAYOUT_NOTE_MAX = 500;

/**
 * A payout held for an operator's decision: what our Nexus handler puts in the flow's input for a
 * caller's payout above its `payoutApprovalAbove`. Nothing reaches the provider until an approval
 * arrives; none in `waitMs`, or a rejection, ends the flow PayoutNotApproved, nothing sent.
 */
export interface PayoutApprovalGate {
  /** The Nexus caller whose payout it is. */
  caller: string;
  /** The key IDs (on CARD_ACTION_TRUSTED_KEYS) whose holders may decide: the caller's payoutApprovers. */
  approvers: string[];
  /** The amount above which the caller's payouts wait (its payoutApprovalAbove). */
  above: number;
  /** How long it waits for a decision (its payoutApprovalWaitMs). */
  waitMs: number;
}

/** Where a payout held for approval stands (the flow's `payoutApproval` query; the CLI's `payouts-awaiting`). */
export interface PayoutApprovalState {
  workflowId: string;
  runId: string;
  merOrderNo: string;
  arriveAmount: number;
  arriveCurrency: string;
  paymentType: string;
  /** The payee's account's last 4 characters: enough for an operator to tell payouts apart. */
  payeeAccountEnd: string;
  caller: string;
  above: number;
  state: 'awaiting' | 'approved' | 'rejected' | 'expired';
  requestedAt: number;
  /** When it ends PayoutNotApproved without a decision. */
  deadline: number;
  decidedBy?: { keyId: string; sub: string; at: number; note?: string };
}

/** What a payout flow posts with once approved: the decision, and the approvers it was checked against (the activity checks it again). */
export interface ApprovedPayout {
  decision: WithPayoutCapability;
  approvers: string[];
}

export const PAYOUT_CAPABILITY_RULE =
  "is required: an operator's decision signed with a key the caller's payoutApprovers names (the CLI's payout-approve and payout-reject sign with CARD_ACTION_SIGNING_KEY); holding the payload key grants nothing";

/** The bytes a payout capability's signature covers: a domain of its own, then every field but the signature. */
export function payoutCapabilityMessage(c: Omit<PayoutCapability, 'sig'>): string {
  return ['card-issuing/payout-action/v1', c.keyId, c.sub, c.workflowId, c.action, String(c.exp), c.nonce, c.args].join('\n');
}

/** A gate's field errors (a start that names one breaks no rule of ours), under `approval.<field>`. */
export function payoutApprovalGateErrors(gate: unknown): FieldErrors {
  if (gate === undefined) return {};
  if (typeof gate !== 'object' || gate === null || Array.isArray(gate)) return { approval: 'must be an object { caller, approvers, above, waitMs }' };
  const g = gate as Partial<Record<keyof PayoutApprovalGate, unknown>>;
  const errors: FieldErrors = {};
  if (typeof g.caller !== 'string' || g.caller.length === 0) errors['approval.caller'] = 'must name the caller';
  if (!Array.isArray(g.approvers) || g.approvers.length === 0 || !g.approvers.every((k) => typeof k === 'string' && KEY_ID_PATTERN.test(k))) errors['approval.approvers'] = `must be key IDs, at least one (each ${KEY_ID_RULE})`;
  if (typeof g.above !== 'number' || !Number.isSafeInteger(g.above) || g.above < 0) errors['approval.above'] = 'must be a whole number of minor units, 0 or more';
  if (typeof g.waitMs !== 'number' || !Number.isSafeInteger(g.waitMs) || g.waitMs < 1000 || g.waitMs > MAX_APPROVAL_WAIT_MS) errors['approval.waitMs'] = `must be an integer from 1000 to ${MAX_APPROVAL_WAIT_MS} (milliseconds; at most 30 days)`;
  return errors;
}

export const MAX_APPROVAL_WAIT_MS = 30 * 24 * 3_600_000;

/**
 * Field errors of a decision on the payout `expected` describes: its own fields (the same run,
 * merOrderNo, amount and currency; a note within PAYOUT_NOTE_MAX), then its capability's shape,
 * binding (this flow, this action, these arguments, a key among `approvers`) and, given `now`,
 * expiry. The signature is the worker's to check (codec/card-capability.ts).
 */
export function payoutDecisionErrors(
  request: unknown,
  expected: { workflowId: string; action: PayoutAction; approvers: readonly string[]; now?: number } & Omit<PayoutDecision, 'note'>,
): FieldErrors {
  const d = (typeof request === 'object' && request !== null ? request : {}) as Partial<Record<keyof PayoutDecision, unknown>>;
  const errors: FieldErrors = {};
  for (const field of ['runId', 'merOrderNo', 'arriveAmount', 'arriveCurrency'] as const) {
    if (d[field] !== expected[field]) errors[field] = `must be this payout's (${String(expected[field])}): a decision serves the payout and amount it was made for`;
  }
  if (d.note !== undefined && (typeof d.note !== 'string' || d.note.length > PAYOUT_NOTE_MAX || /[\u0000-\u001f\u007f]/.test(d.note))) errors.note = `must be text of at most ${PAYOUT_NOTE_MAX} characters, without control characters`;
  const cap = capabilityOf(request);
  if (cap === undefined) return { ...errors, capability: PAYOUT_CAPABILITY_RULE };
  Object.assign(errors, signedFieldErrors(cap, request, expected.now));
  if (cap.workflowId !== expected.workflowId) errors['capability.workflowId'] = `must be this payout's flow (${expected.workflowId}): a decision serves the payout it was made for`;
  if (cap.action !== expected.action) errors['capability.action'] = `must be "${expected.action}": a capability serves the action it was made for`;
  if (typeof cap.keyId === 'string' && !expected.approvers.includes(cap.keyId)) {
    errors['capability.keyId'] ??= `"${cap.keyId}" is not among this payout's approvers (${expected.approvers.join(', ')}: the caller's payoutApprovers): only an operator's key decides a payout`;
  }
  return ordered(errors);
}

/**
 * The nonces (and PIN boxes) a card accepted, each until its expiry: carried across continue-as-new,
 * so a capability or a sealed PIN copied from history is refused by the card it was used on.
 */
export class UsedOnce {
  readonly #until: Map<string, number>;

  constructor(entries: Array<[string, number]> = []) {
    this.#until = new Map(entries);
  }

  has(id: string): boolean {
    return this.#until.has(id);
  }

  add(id: string, until: number): void {
    this.#until.set(id, until);
  }

  /** What is still worth remembering at `now`: an expired capability is refused by its expiry anyway. */
  entries(now: number): Array<[string, number]> {
    return [...this.#until].filter(([, until]) => until > now);
  }
}
