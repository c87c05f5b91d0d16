/**
 * Provider calls run on one task queue per rate class, each with a server-side rate
 * (maxTaskQueueActivitiesPerSecond), so that the whole fleet of workers stays under the
 * provider's per-endpoint limits. See docs/rate-budget.md.
 */
export type RateClass = 'general' | 'sensitive' | 'funding' | 'withdrawal';

export const RATE_CLASSES: readonly RateClass[] = ['general', 'sensitive', 'funding', 'withdrawal'];

/** Provider limit per window for each class (the provider counts per endpoint; funding and withdrawal separately). */
export const RATE_CLASS_LIMITS: Record<RateClass, number> = { general: 100, sensitive: 70, funding: 70, withdrawal: 70 };

export function rateClassQueue(mainQueue: string, rateClass: RateClass): string {
  return `${mainQueue}-provider-${rateClass}`;
}
