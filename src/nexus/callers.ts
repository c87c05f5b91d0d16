/**
 * Who may call our Nexus service (docs/nexus.md, "Who can call"). A caller is an endpoint: each one
 * configured in NEXUS_CALLERS gets an endpoint of its own (`<endpoint>-<name>`) routed to a task queue
 * of its own (`<queue>-nexus-<name>`), polled by a handler that knows which caller it serves. So the
 * handler's identity of the caller is the endpoint the request came through, which the caller cannot
 * choose: who may reach that endpoint is the server's to enforce (Temporal Cloud's allow-list of caller
 * namespaces; on a self-hosted server, its authorizer).
 *
 * Pure (zod and the contract's names): config.ts validates NEXUS_CALLERS with it once.
 */
import { z } from 'zod';
import { NEXUS_OPERATIONS, type NexusOperationName } from '../client/nexus-contract';
import { MAX_APPROVAL_WAIT_MS, type PayoutApprovalGate } from '../shared/card-capability';
import { KEY_ID_PATTERN, KEY_ID_RULE } from '../shared/key-id';

export interface NexusCaller {
  /** 1-16 of [a-z0-9-]: its queue's and endpoint's suffix, and the prefix of its keys (`<name>_<key>`). */
  name: string;
  /** The namespace its workflows run in: what the endpoint's allow-list names (where the server has one), and documentation. */
  namespace: string;
  /** The operations it may call; any other is refused NotAllowed before anything starts. */
  operations: readonly NexusOperationName[];
  /** The most a sendPayout may pay out (arriveAmount, in the arrive currency's minor units); above it, NotAllowed. */
  payoutLimit?: number;
  /**
   * The most a sendPayout pays without an operator's approval; above it (up to payoutLimit) the payout
   * starts and waits, sending nothing, for an approval signed by a key of `payoutApprovers`.
   */
  payoutApprovalAbove?: number;
  /** The key IDs (on CARD_ACTION_TRUSTED_KEYS) of the operators who may approve or reject its payouts; required with payoutApprovalAbove. */
  payoutApprovers?: readonly string[];
  /** How long a payout waits for a decision before it ends PayoutNotApproved, nothing sent (default DEFAULT_PAYOUT_APPROVAL_WAIT_MS). */
  payoutApprovalWaitMs?: number;
  /** The most an issueCard may load onto the new card (initialAmount, cents). */
  issueLimit?: number;
  /** The most one fundCard may move onto a card (amount, cents). */
  fundLimit?: number;
}

export const NEXUS_CALLER_NAME = /^[a-z0-9-]{1,16}$/;

/** A caller entry's fields, in the order docs/nexus.md lists them (the first three required). */
const CALLER_FIELDS = ['name', 'namespace', 'operations', 'payoutLimit', 'payoutApprovalAbove', 'payoutApprovers', 'payoutApprovalWaitMs', 'issueLimit', 'fundLimit'] as const;

/**
 * The one caller of development (CARD_ISSUING_DEVELOPMENT, NEXUS_CALLERS unset): every operation, no
 * limit, from the namespace our dev server makes for callers (temporal/nexus-endpoint.ts CALLERS_NAMESPACE).
 */
export const DEVELOPMENT_NEXUS_CALLER: NexusCaller = Object.freeze({ name: 'dev', namespace: 'callers', operations: Object.freeze([...NEXUS_OPERATIONS]) });

const cents = z.number({ message: 'must be a whole number of cents' }).int('must be a whole number of cents').nonnegative('must be a whole number of cents, 0 or more');

/** How long a payout held for approval waits by default: a working day's turn for a person. */
export const DEFAULT_PAYOUT_APPROVAL_WAIT_MS = 24 * 3_600_000;
const APPROVAL_WAIT_RULE = `must be a whole number of milliseconds from 1000 to ${MAX_APPROVAL_WAIT_MS} (30 days)`;

const callerSchema = z.strictObject(
  {
    name: z.string({ message: 'must be 1-16 characters of [a-z0-9-]' }).regex(NEXUS_CALLER_NAME, 'must be 1-16 characters of [a-z0-9-]'),
    namespace: z
      .string({ message: 'must be the caller\'s Temporal namespace' })
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/, 'must be the caller\'s Temporal namespace (1-255 of [A-Za-z0-9._-])'),
    operations: z
      .array(z.enum(NEXUS_OPERATIONS as [NexusOperationName, ...NexusOperationName[]], { message: `must name operations of the service: ${NEXUS_OPERATIONS.join(', ')}` }), {
        message: 'must be a list of operation names',
      })
      .min(1, 'must name at least one operation'),
    payoutLimit: cents.optional(),
    payoutApprovalAbove: cents.optional(),
    payoutApprovers: z
      .array(z.string({ message: `must be key IDs on CARD_ACTION_TRUSTED_KEYS (${KEY_ID_RULE})` }).regex(KEY_ID_PATTERN, `must be key IDs on CARD_ACTION_TRUSTED_KEYS (${KEY_ID_RULE})`), {
        message: 'must be a list of the key IDs (on CARD_ACTION_TRUSTED_KEYS) of the operators who may approve',
      })
      .min(1, 'must name at least one approver\'s key ID')
      .optional(),
    payoutApprovalWaitMs: z.number({ message: APPROVAL_WAIT_RULE }).int(APPROVAL_WAIT_RULE).min(1000, APPROVAL_WAIT_RULE).max(MAX_APPROVAL_WAIT_MS, APPROVAL_WAIT_RULE).optional(),
    issueLimit: cents.optional(),
    fundLimit: cents.optional(),
  },
  { message: `must be an object { ${CALLER_FIELDS.map((f, i) => (i < 3 ? f : `${f}?`)).join(', ')} }` },
).superRefine((caller, ctx) => {
  // An approval applies between payoutApprovalAbove and payoutLimit, by the operators payoutApprovers names: each without the other means nothing.
  const { payoutApprovalAbove: above, payoutLimit: limit, payoutApprovers: approvers, payoutApprovalWaitMs: waitMs } = caller;
  if (above !== undefined && limit !== undefined && above >= limit) {
    ctx.addIssue({ code: 'custom', path: ['payoutApprovalAbove'], message: `must be below payoutLimit (${limit}): a payout above payoutLimit is refused, one between the two waits for an operator's approval` });
  }
  if (above !== undefined && approvers === undefined) {
    ctx.addIssue({ code: 'custom', path: ['payoutApprovers'], message: "is required with payoutApprovalAbove: the key IDs (on CARD_ACTION_TRUSTED_KEYS) of the operators who may approve; a payout nobody may approve would only wait" });
  }
  if (above === undefined && (approvers !== undefined || waitMs !== undefined)) {
    ctx.addIssue({ code: 'custom', path: [approvers !== undefined ? 'payoutApprovers' : 'payoutApprovalWaitMs'], message: 'means nothing without payoutApprovalAbove (the amount above which a payout waits for an approval)' });
  }
});

const callersSchema = z
  .array(callerSchema, { message: 'must be a JSON array of callers, or @path/to/file.json holding one' })
  .superRefine((callers, ctx) => {
    const seen = new Set<string>();
    callers.forEach((caller, i) => {
      if (seen.has(caller.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `must be unique: "${caller.name}" is named twice` });
      seen.add(caller.name);
    });
  });

/** Why NEXUS_CALLERS was refused: where in it (`[1].operations[0]`; empty: the whole value) and the rule broken. */
export class NexusCallersError extends Error {
  constructor(
    readonly at: string,
    readonly rule: string,
  ) {
    super(`${at === '' ? '' : `${at} `}${rule}`);
  }
}

/** NEXUS_CALLERS's text (JSON, or `@path` of a file holding it; `readFile` reads that file) as callers, or a NexusCallersError. */
export function parseNexusCallers(text: string, readFile: (path: string) => string): NexusCaller[] {
  let json = text.trim();
  if (json.startsWith('@')) {
    const path = json.slice(1);
    try {
      json = readFile(path);
    } catch (err) {
      throw new NexusCallersError('', `names the file ${path}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new NexusCallersError('', 'must be a JSON array of callers, or @path/to/file.json holding one: it is not JSON');
  }
  const parsed = callersSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  const rule = issue.code === 'unrecognized_keys' ? `has no field ${issue.keys.map((k) => `"${k}"`).join(', ')}: a caller takes ${CALLER_FIELDS.join(', ')}` : issue.message;
  throw new NexusCallersError(at, rule);
}

/** The longest key a caller may send: the provider's 64 characters, less the caller's prefix `<name>_`. */
export function maxKeyLength(caller: Pick<NexusCaller, 'name'>): number {
  return 64 - caller.name.length - 1;
}

/** The key our client uses for a caller's key: `<name>_<key>`. A name holds no `_`, so the first one ends it: two callers' keys never meet. */
export function scopedKey(caller: Pick<NexusCaller, 'name'>, key: string): string {
  return `${caller.name}_${key}`;
}

// The caller's endpoint name lives beside its queue's (shared/task-queues.ts): temporal/ reads it without importing nexus/.
export { callerEndpointName } from '../shared/task-queues';

/**
 * The approval gate of `caller`'s payout of `arriveAmount` (docs/nexus.md, "Payouts that need an
 * approval"): above its payoutApprovalAbove, the payout waits for one of its approvers; otherwise none.
 */
export function payoutApprovalGate(caller: NexusCaller, arriveAmount: unknown): PayoutApprovalGate | undefined {
  const above = caller.payoutApprovalAbove;
  if (above === undefined || typeof arriveAmount !== 'number' || arriveAmount <= above) return undefined;
  return { caller: caller.name, approvers: [...(caller.payoutApprovers ?? [])], above, waitMs: caller.payoutApprovalWaitMs ?? DEFAULT_PAYOUT_APPROVAL_WAIT_MS };
}
