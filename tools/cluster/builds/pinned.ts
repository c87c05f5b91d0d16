/** A short flow of a variant build, registered as src/workflows/index.ts registers one. */
import { markingUnknownOutcome } from '../../../src/workflows/lib/outcome-unknown';
import { declareVersioning } from '../../../src/workflows/lib/versioning';

/**
 * Pinned, and marking an unknown outcome. The declaration must be the variant's own: a function
 * without one takes the worker's default behaviour, AUTO_UPGRADE, and would move between builds.
 */
export function pinnedFlow<I, R>(flow: (input: I) => Promise<R>): (input: I) => Promise<R> {
  declareVersioning('PINNED', flow);
  return markingUnknownOutcome(flow);
}
