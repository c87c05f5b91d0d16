/**
 * The sandbox's runtime configuration (CONTRACTS §5), changed at run time through
 * PUT /sandbox/config. Every field has a default; a partial update is merged in deeply
 * and validated as a whole, so a bad value leaves the current configuration untouched.
 */
import { z } from 'zod';
import { ENDPOINTS, type EndpointDef, type FieldErrors } from '../provider-api';
import { fieldErrorsFromZod } from '../shared/zod-field-errors';

/** How endpoints are named in the configuration: METHOD and path template, as in the spec. */
export function endpointName(e: EndpointDef): string {
  return `${e.method} ${e.path.replace(/:([A-Za-z]+)/g, '{$1}')}`;
}
const ENDPOINT_NAMES: ReadonlySet<string> = new Set((Object.values(ENDPOINTS) as EndpointDef[]).map(endpointName));

/** The longest read lag (readLagMs, cardReadLagMs) the sandbox plays; the card history it keeps reaches this far back. */
export const MAX_READ_LAG_MS = 600_000;

const ms = (max = 3_600_000) => z.number().int('must be an integer').min(0, `must be an integer between 0 and ${max}`).max(max, `must be an integer between 0 and ${max}`);
const rate = z.number().min(0, 'must be a number between 0 and 1').max(1, 'must be a number between 0 and 1');
const endpointFaults = z
  .object({
    errorRate: rate.optional(),
    hangRate: rate.optional(),
    truncateRate: rate.optional(),
    refuseRate: rate.optional(),
    refuseStatus: z.union([z.literal(403), z.literal(404), z.literal(429)], 'must be 403, 404 or 429').optional(),
    maxFaults: z.number().int('must be an integer').min(0, 'must be an integer between 0 and 1000000').max(1_000_000, 'must be an integer between 0 and 1000000').optional(),
    opaqueErrors: z.boolean('must be true or false').optional(),
    afterEffect: z.boolean('must be true or false').optional(),
    beforeEffect: z.boolean('must be true or false').optional(),
    ignoreIdempotencyKey: z.boolean('must be true or false').optional(),
    refuseAfterFaults: z.boolean('must be true or false').optional(),
  })
  .strict();
const count = z.number().int('must be an integer').min(1, 'must be a positive integer').max(1_000_000, 'must be at most 1000000');

/**
 * `contract`: answers exactly as CONTRACTS says (the default). `minimal`: answers only the fields
 * the spec lists, plain-text error messages, prefix-less fileTokens, the other payout spelling
 * (SUCCESS, CANCELED) and webhooks without X-API-Key, eventId and createdAt (CONTRACTS §8).
 * `divergent`: minimal, and every shape the spec does not show answered another way (profiles.ts).
 */
export const SANDBOX_PROFILES = ['contract', 'minimal', 'divergent'] as const;
export type SandboxProfile = (typeof SANDBOX_PROFILES)[number];

export const sandboxConfigSchema = z.object({
  profile: z.enum(SANDBOX_PROFILES, `must be one of ${SANDBOX_PROFILES.join(', ')}`),
  cardProvisioningMs: ms(),
  kycReviewMs: ms(),
  esimIssueMs: ms(),
  /** How long POST /esim/purchase and /esim/recharge wait for issuance before answering PAID. */
  esimWaitMs: ms(60_000),
  /** Issuance time of the magic plan epln_slow. */
  esimSlowIssueMs: ms(),
  /** How often eSIM usage figures may change (spec: at most once a minute). */
  esimUsageSyncMs: ms(),
  /** Each step of a payout: PENDING → PROCESSING → terminal. */
  payoutProcessingMs: ms(),
  /** Read-after-write lag: GET /payouts/{merOrderNo} and GET /operations/{key} answer 404 for a record younger than this (0: none). */
  readLagMs: ms(MAX_READ_LAG_MS),
  /**
   * Read lag of GET /cards/{cardId}, a lagging read replica: the card as it was this long ago (0: none).
   * A card created less than this ago answers 404; otherwise the card's newest state recorded at or before
   * now − cardReadLagMs (status, availableBalance, totalConsumption, updatedAt, every field). Writes, their
   * answers, GET /cards/{cardId}/sensitive, webhooks and the control API's ledger are never lagged.
   */
  cardReadLagMs: ms(MAX_READ_LAG_MS),
  /** How long an accepted idempotent write stays PROCESSING before its side effect (0: none). */
  operationProcessingMs: ms(60_000),
  /**
   * A fee the operation record adds to a movement's amount (GET /operations/{key} shows amount + fee;
   * 0: none): the spec does not define the record's fields, and a provider may show a fee-inclusive amount.
   */
  operationRecordFeeCents: z.number().int('must be an integer').min(0, 'must be a non-negative integer').max(1_000_000, 'must be at most 1000000'),
  /** Lifetime of a presigned upload URL. */
  uploadExpiresInSec: z.number().int('must be an integer').min(1, 'must be an integer between 1 and 86400').max(86_400, 'must be an integer between 1 and 86400'),
  /** Charged from the wallet per accepted KYC submission (form, manual, hosted). */
  kycFeeCents: z.number().int('must be an integer').min(0, 'must be a non-negative integer').max(1_000_000, 'must be at most 1000000'),
  maxCardCount: count,
  webhookUrl: z.url('must be an absolute URL'),
  /**
   * Several receivers (bridge replicas without a load balancer): each delivery attempt goes to
   * the next one, round-robin, so a redelivery reaches another replica. Empty: webhookUrl only.
   */
  webhookUrls: z.array(z.url('must be an absolute URL'), 'must be an array of absolute URLs').max(16, 'must have at most 16 entries'),
  webhook: z.object({
    dropRate: rate,
    duplicateRate: rate,
    delayMs: ms(),
    reorder: z.boolean('must be true or false'),
    /** With reorder on, events are held this long and then delivered newest first. */
    reorderWindowMs: ms(60_000),
    /** Delay before attempt n+1 is retryBaseMs * 2^(n-1). */
    retryBaseMs: ms(),
    maxAttempts: z.number().int('must be an integer').min(1, 'must be an integer between 1 and 8').max(8, 'must be an integer between 1 and 8'),
    timeoutMs: ms(10_000),
  }),
  faults: z.object({
    errorRate: rate,
    latencyMs: ms(60_000),
    hangRate: rate,
    /** How long a hung call is held before it is finally answered. */
    hangMs: ms(600_000),
    /**
     * Per endpoint ("POST /kyc/cardholders/form"): its own error and hang rates, in place of the
     * global ones; `truncateRate`: share of answers cut off mid-body after the side effect (a 200
     * whose JSON ends halfway); `afterEffect`: every error and hang strikes after the side effect; `beforeEffect`: before it (neither: half and half);
     * `ignoreIdempotencyKey`: the endpoint takes the spec at its word and ignores X-Idempotency-Key
     * (each call is a new request), as a provider may where the spec lists no key;
     * `refuseRate`: share of calls refused before anything happens with `refuseStatus` (429, the
     * default: another client of the project spent the window; 403: INVALID_SIGNATURE; 404); `maxFaults`:
     * the endpoint's faults (errors, hangs, cut answers, 429s) strike at most this many times
     * since the configuration was last set; `opaqueErrors`: its error answers (4xx, 5xx) keep
     * their status but carry a body that is not JSON, as a proxy's error page would;
     * `refuseAfterFaults`: once its `maxFaults` struck, every later call is refused with
     * `refuseStatus` (a lost answer, then an egress IP dropped from the allow-list: issue 51, case 1).
     */
    endpoints: z.record(z.string(), endpointFaults).superRefine((byEndpoint, ctx) => {
      for (const name of Object.keys(byEndpoint)) {
        if (!ENDPOINT_NAMES.has(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'must name an endpoint as METHOD /path, e.g. POST /kyc/cardholders/form' });
      }
    }),
  }),
  rateLimit: z.object({ windowMs: count, general: count, sensitive: count, balance: count }),
  /** BINs withdrawn since a client cached the list: not listed, and POST /cards answers 400 naming cardBinId. */
  retiredBins: z.array(z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters'), 'must be an array of cardBinIds').max(100, 'must have at most 100 entries'),
  /** Client IPs allowed on /open-api; empty: every loopback address. */
  whitelist: z.array(z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters'), 'must be an array of IP addresses').max(100, 'must have at most 100 entries'),
});
export type SandboxConfig = z.infer<typeof sandboxConfigSchema>;

export function defaultSandboxConfig(webhookUrl: string): SandboxConfig {
  return {
    profile: 'contract',
    cardProvisioningMs: 300,
    kycReviewMs: 500,
    esimIssueMs: 200,
    esimWaitMs: 2000,
    esimSlowIssueMs: 10_000,
    esimUsageSyncMs: 60_000,
    payoutProcessingMs: 1000,
    operationProcessingMs: 0,
    operationRecordFeeCents: 0,
    readLagMs: 0,
    cardReadLagMs: 0,
    uploadExpiresInSec: 600,
    kycFeeCents: 100,
    maxCardCount: 2,
    webhookUrl,
    webhookUrls: [],
    webhook: { dropRate: 0, duplicateRate: 0, delayMs: 0, reorder: false, reorderWindowMs: 250, retryBaseMs: 1000, maxAttempts: 8, timeoutMs: 10_000 },
    faults: { errorRate: 0, latencyMs: 0, hangRate: 0, hangMs: 35_000, endpoints: {} },
    rateLimit: { windowMs: 60_000, general: 100, sensitive: 70, balance: 70 },
    retiredBins: [],
    whitelist: [],
  };
}

export type ConfigUpdate = { ok: true; config: SandboxConfig } | { ok: false; errors: FieldErrors };

/** Deep-merges a partial update into `current` and validates the result; unknown fields are refused. */
export function mergeSandboxConfig(current: SandboxConfig, patch: unknown): ConfigUpdate {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return { ok: false, errors: { body: 'must be a JSON object' } };
  const unknown = unknownPaths(current, patch as Record<string, unknown>, '');
  const merged = deepMerge(current, patch as Record<string, unknown>);
  const parsed = sandboxConfigSchema.safeParse(merged);
  const errors: FieldErrors = parsed.success ? {} : fieldErrorsFromZod(parsed.error);
  for (const path of unknown) errors[path] = 'is not a configuration field';
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, config: parsed.data! };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepMerge(base: unknown, patch: Record<string, unknown>): unknown {
  if (!isPlainObject(base)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) out[k] = isPlainObject(v) && isPlainObject(base[k]) ? deepMerge(base[k], v) : v;
  return out;
}

function unknownPaths(base: Record<string, unknown>, patch: Record<string, unknown>, prefix: string): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(patch)) {
    const path = prefix + k;
    if (!(k in base)) out.push(path);
    // A map of the caller's keys (checked by the schema), not fields of ours.
    else if (path === 'faults.endpoints') continue;
    else if (isPlainObject(v) && isPlainObject(base[k])) out.push(...unknownPaths(base[k] as Record<string, unknown>, v, path + '.'));
  }
  return out;
}
