/**
 * Compiled by `tsc` (the first step of `npm test`), never run: a call on the wrong rate class
 * must not compile. If one of these calls ever compiles, its `@ts-expect-error` is unused and
 * the build fails.
 */
import type { ProviderCalls } from '../../src/workflows/lib/provider';

export function wrongRateClassCalls(sensitive: ProviderCalls<'sensitive'>, funding: ProviderCalls<'funding'>): unknown[] {
  return [
    // @ts-expect-error GET /cards/{cardId} is a general call
    sensitive.getCard,
    // @ts-expect-error revealing card details is a sensitive call
    funding.revealSensitiveCard,
    sensitive.revealSensitiveCard,
    funding.moveMoney,
  ];
}
