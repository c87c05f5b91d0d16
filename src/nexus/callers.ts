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

export interface NexusCaller {
  /** 1-16 of [a-z0-9-]: its queue's and endpoint's suffix, and the prefix of its keys (`<name>_<key>`). */
  name: string;
  /** The namespace its workflows run in: what the endpoint's allow-list names (where the server has one), and documentation. */
  namespace: string;
  /** The operations it may call; any other is refused NotAllowed before anything starts. */
  operations: readonly NexusOperationName[];
  /** The most a sendPayout may pay out (arriveAmount, in the arrive currency's minor units); above it, NotAllowed. */
  payoutLimit?: number;
  /** The most an issueCard may load onto the new card (initialAmount, cents). */
  issueLimit?: number;
  /** The most one fundCard may move onto a card (amount, cents). */
  fundLimit?: number;
}

export const NEXUS_CALLER_NAME = /^[a-z0-9-]{1,16}$/;

/**
 * The one caller of development (CARD_ISSUING_DEVELOPMENT, NEXUS_CALLERS unset): every operation, no
 * limit, from the namespace our dev server makes for callers (temporal/nexus-endpoint.ts CALLERS_NAMESPACE).
 */
export const DEVELOPMENT_NEXUS_CALLER: NexusCaller = Object.freeze({ name: 'dev', namespace: 'callers', operations: Object.freeze([...NEXUS_OPERATIONS]) });

const cents = z.number({ message: 'must be a whole number of cents' }).int('must be a whole number of cents').nonnegative('must be a whole number of cents, 0 or more');

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
    issueLimit: cents.optional(),
    fundLimit: cents.optional(),
  },
  { message: 'must be an object { name, namespace, operations, payoutLimit?, issueLimit?, fundLimit? }' },
);

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
  const rule = issue.code === 'unrecognized_keys' ? `has no field ${issue.keys.map((k) => `"${k}"`).join(', ')}: a caller takes name, namespace, operations, payoutLimit, issueLimit, fundLimit` : issue.message;
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
