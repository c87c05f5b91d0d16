/**
 * What a provider's failure says, in its words: its code word, else the rows of plain wording
 * below. One of the two ways provider/errors.ts reads an answer into a type (the other is the
 * HTTP status); also used for the reasons a FAILED operation or order gives.
 */
import { codeMeaning, type ProviderErrorType } from '../shared/failures';
import type { EndpointRef } from './errors';

/**
 * THE classification of wording. The spec gives few status codes and no list of messages, so a
 * failure is read from its HTTP status, its `errors` map and the words of its `message`: first
 * the code word (the message's first word, before any colon) when it is one of the provider's
 * codes (PROVIDER_ERROR_CODES), then these rows of plain wording, matched case-insensitively in
 * order (the first match wins). Word matches apply to refusals (4xx) only: a 5xx stays a
 * ServerError whatever it says, because its retry semantics differ. Each row has a test with
 * plain wording.
 */
interface ClassificationRow {
  type: ProviderErrorType;
  /** The row matches when every pattern of any one group matches. */
  words: ReadonlyArray<readonly RegExp[]>;
  /** The endpoints whose answers the row may read (by path); any when absent. */
  only?: RegExp;
}

const row = (type: ProviderErrorType, ...words: RegExp[][]): ClassificationRow => ({ type, words });
/** A row that reads only the answers of the endpoints whose path matches `only`. */
const rowFor = (only: RegExp, type: ProviderErrorType, ...words: RegExp[][]): ClassificationRow => ({ type, words, only });
/** The KYC submissions: the only answers a duplicate cardholder can be. */
const KYC_SUBMISSIONS = /^\/kyc\/cardholders\//;

export const CLASSIFICATION: readonly ClassificationRow[] = [
  row('RateLimited', [/rate.?limit|too many requests/i]),
  row('IpNotWhitelisted', [/\bip\b|whitelist|allowlist/i]),
  row('InvalidSignature', [/signature/i]),
  row('NonceReused', [/nonce/i]),
  // Any wording of a request still being worked on: "in progress", "being processed", "still processing", "currently processing".
  row('IdempotencyInProgress', [/in progress|(still|being|currently|already being) process|is processing|retry shortly/i]),
  row('IdempotencyKeyTerminal', [/idempotency|\bkey\b/i, /terminal|definitively failed|already failed|previously failed/i]),
  row('IdempotencyConflict', [/idempotency|\bkey\b/i, /different|mismatch|conflict|another/i]),
  // A balance too low, in the words providers use for it ("exceeds available balance", "not enough funds", …).
  row(
    'InsufficientFunds',
    [/insufficient/i, /balance|fund/i],
    [/not enough/i, /balance|fund|money|credit/i],
    [/exceed/i, /balance/i],
    [/balance/i, /too low|is low|low balance|not sufficient|below/i],
    [/(greater|more|larger|higher) than/i, /balance/i],
  ),
  row('PlanUnavailable', [/plan/i, /unavailable|not available|sold out/i]),
  // Before CardholderNotApproved: a duplicate's wording names the earlier one as pending or approved.
  // Only a KYC submission's answer can be a duplicate cardholder: elsewhere "duplicate" may be an idempotency wording.
  rowFor(KYC_SUBMISSIONS, 'DuplicateCardholder', [/duplicate|already exists|already (pending|approved)/i]),
  row('CardholderNotApproved', [/not approved/i], [/cardholder/i, /pending|rejected|not verified/i]),
  row('CardLimitReached', [/maxCardCount|card limit|too many cards/i], [/limit/i, /\bcards\b/i]),
  row('UploadUrlExpired', [/expired/i, /url|upload|link/i], [/url|link/i, /already used/i]),
  row('FileTooLarge', [/too large|exceeds/i, /file|size|payload/i]),
  row('NotFound', [/not found|does not exist|no such/i]),
  row('InvalidState', [/invalid state|not allowed in (its|the) current state/i]),
];

/** The type a provider's message names, by code word or wording; undefined when neither is known. */
export function classifyMessage(message: string, endpoint?: EndpointRef): ProviderErrorType | undefined {
  const code = messageCode(message);
  const byCode = code === undefined ? undefined : codeMeaning(code)?.type;
  const applies = (r: ClassificationRow) => r.only === undefined || (endpoint !== undefined && r.only.test(endpoint.path));
  return byCode ?? CLASSIFICATION.find((r) => applies(r) && r.words.some((group) => group.every((re) => re.test(message))))?.type;
}

/** 'RATE_LIMITED: retry in 3 seconds' → 'RATE_LIMITED'; non-codes are dropped (they may be free text). */
export function messageCode(message: unknown): string | undefined {
  if (typeof message !== 'string') return undefined;
  const m = /^([A-Z][A-Z0-9_]{1,63})(?::|$)/.exec(message.trim());
  return m ? m[1] : undefined;
}
