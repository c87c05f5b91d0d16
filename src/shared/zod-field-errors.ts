/**
 * zod issues → { 'billingAddress.country': rule }, read the way the provider's rules are
 * (provider-api/rules.ts): the first issue per field wins; root issues go under `body`. For the
 * inputs we read with zod (webhook envelopes, sandbox configuration, the CLI's JSON); never
 * imported by workflow code, which must not load zod.
 */
import type { z } from 'zod';
import type { FieldErrors } from './failures';

export function fieldErrorsFromZod(error: z.ZodError): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') continue;
    const field = issue.path.length === 0 ? 'body' : issue.path.map(String).join('.');
    if (!(field in out)) out[field] = issue.path.length === 0 && issue.code === 'invalid_type' ? 'must be a JSON object' : issue.message;
  }
  return out;
}
