/**
 * The provider's free text (a field error's rule and field name, a failure reason, a code word) as
 * it may enter history, logs and Nexus answers. A provider may echo what it was sent in its texts
 * ("card 4111111111111111 is blocked", "a@b.example already registered"), and a proxy may answer a
 * page of anything: each text is scrubbed of what could be a card or identity number (a run of 12
 * or more digits, spaces, dots or dashes between them allowed) or an email, and capped; a field map
 * is capped in its count of fields too. Pure: no Node built-ins, so the answers' schemas may use it.
 */

/** The most of one text we keep (a rule or a reason is a sentence; a page of HTML is not). */
export const MAX_PROVIDER_TEXT = 200;
/** The most of a field name we keep. */
export const MAX_FIELD_NAME = 100;
/** The most field errors we keep of one answer (the KYC form, the largest body, has under 40 fields). */
export const MAX_FIELD_ERRORS = 40;

const LONG_DIGIT_RUN = /\d(?:[\s.-]?\d){11,}/g;
/** Any word with an @ in it: an email, or what is left of one. */
const AT_WORD = /\S*@\S*/g;
const MASKED_EMAIL = '***@***';
/**
 * Scrubbing runs on at most this much (linear work, whatever the answer's size): a number or an
 * email that starts before the cap is still whole in it, so the cap cannot cut one into pieces
 * short enough to pass.
 */
const SCRUB_WINDOW = 64;

/** `text` scrubbed of long digit runs (each digit becomes *) and emails, then capped at `max` characters. */
export function providerText(text: string, max = MAX_PROVIDER_TEXT): string {
  const scrubbed = text
    .slice(0, max + SCRUB_WINDOW)
    .replace(LONG_DIGIT_RUN, (run) => run.replace(/\d/g, '*'))
    .replace(AT_WORD, MASKED_EMAIL);
  return scrubbed.length > max ? `${scrubbed.slice(0, max - 1)}…` : scrubbed;
}

/** A field → rule map with every name and rule scrubbed and capped, and at most MAX_FIELD_ERRORS fields (the first ones). */
export function providerFieldErrors(errors: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, rule] of Object.entries(errors).slice(0, MAX_FIELD_ERRORS)) {
    out[providerText(field, MAX_FIELD_NAME)] ??= providerText(rule);
  }
  return out;
}
