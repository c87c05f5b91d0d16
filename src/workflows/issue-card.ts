/**
 * issueCard: checks the request against the BIN's rules, POSTs /cards under a key derived in
 * the workflow, and waits until the card is ENABLE: the card's own workflow tells it, from the
 * CARD_CREATED webhook (which may have come before POST /cards even answered) or, when no
 * webhook comes in time, from its polls of GET /cards/{cardId}.
 */
import { log, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { CardBinAnswer } from '../provider/answers';
import { describeErrors, hasErrors, issueCardErrors, toCardView } from '../shared/card-rules';
import { FailureType } from '../shared/failures';
import { idempotencyKeyFor } from './lib/keys';
import { CARD_ID, FLOW_KIND, PROVIDER_STATUS } from '../shared/search-attributes';
import { phaseOf } from '../shared/statuses';
import type { CardView, IssueCardInput } from '../shared/types';
import { awaitOutcome } from './lib/await-outcome';
import { applicationCause, failWith, isUnreadableAnswer, providerCalls } from './lib/provider';
import { declareVersioning } from './lib/versioning';

/** Attempts bounded by time, not count; the window stays inside the 24 h the provider answers a key with its card. */
const cardRetry = { maximumAttempts: Number.POSITIVE_INFINITY, maximumInterval: '1 minute' } as const;
const CARD_POST_WINDOW = '20 hours';
/**
 * The provider answers a key with its card for 24 h from the first POST; an hour short of that, a run
 * stops posting, whatever its re-schedulings after 429s (each a fresh schedule-to-close window):
 * the first POST's age travels with every attempt (`postBy`), and past it the call ends OutcomeUnknown.
 */
const CARD_POST_BY_MS = 23 * 3_600_000;

export async function issueCard(input: IssueCardInput): Promise<CardView> {
  upsertSearchAttributes([{ key: FLOW_KIND, value: 'issueCard' }]);
  // The sealed PIN's expiry is checked once, as the flow starts: the box opens only for this flow (codec/card-secrets.ts).
  assertValid(input, undefined, Date.now());
  const general = providerCalls('general');
  const bin = await loadBin(input, false);
  if (bin.requireKycCardholder) await assertCardholderApproved(input.cardholderId!);

  const idempotencyKey = input.idempotencyKey ?? idempotencyKeyFor('card', workflowInfo().workflowId);
  const created = await createCard(input, idempotencyKey);
  upsertSearchAttributes([
    { key: CARD_ID, value: created.cardId },
    { key: PROVIDER_STATUS, value: created.status },
  ]);

  const outcome = await awaitOutcome({ kind: 'card', entityId: created.cardId, timings: input.timings });
  if (!outcome) {
    // The card exists and its initialAmount left the wallet: the flow's open item follows the card from here (docs/idempotency.md, "Open items").
    failWith(FailureType.CardProvisioningTimedOut, `card ${created.cardId} was still CREATING when the deadline passed`, [{ cardId: created.cardId, amount: input.initialAmount, mayHaveTakenEffect: true }]);
  }
  upsertSearchAttributes([{ key: PROVIDER_STATUS, value: outcome.status }]);
  if (phaseOf('card', outcome.status) === 'failed') {
    failWith(FailureType.CardProvisioningFailed, `the provider could not provision card ${created.cardId}`, [{ cardId: created.cardId }]);
  }
  return toCardView(outcome.data);

  async function loadBin(req: IssueCardInput, refresh: boolean): Promise<CardBinAnswer> {
    const found = await general.getCardBin({ cardBinId: req.cardBinId, refresh });
    if (!found) {
      const errors = { cardBinId: 'is not a BIN available to this project (GET /card-bins)' };
      failWith(FailureType.ValidationFailed, describeErrors(errors), [{ errors }]);
    }
    assertValid(req, found);
    return found;
  }

  /** Our pre-check saves a POST the provider would refuse; the provider's refusal stays authoritative. */
  async function assertCardholderApproved(cardholderId: string): Promise<void> {
    let holder: Awaited<ReturnType<typeof general.getCardholder>>;
    try {
      holder = await general.getCardholder({ id: cardholderId });
    } catch (err) {
      // A KYC status that cannot be read (InvalidResponse, once the activity's retries are spent) does not fail the flow.
      if (!isUnreadableAnswer(err)) throw err;
      log.warn('KYC status unreadable (GET /kyc/cardholders/{id}): the provider decides on POST /cards', { cardholderId });
      return;
    }
    if (holder?.kycStatus !== 'APPROVED') {
      failWith(FailureType.CardholderNotApproved, `cardholder ${cardholderId} is ${holder?.kycStatus ?? 'unknown'}, not APPROVED`, [
        { errors: { cardholderId: 'must be an APPROVED KYC cardholder' } },
      ]);
    }
  }

  /** A stale BIN is refreshed and the request checked again against it before one more try. */
  async function createCard(req: IssueCardInput, key: string): Promise<CardView> {
    // A restart of the workflow ID finds the earlier run's card first, whoever gave the key (activities/cards.ts):
    // only a derived key needs its origin to say which keys an earlier version could have derived.
    const keyOrigin = req.idempotencyKey === undefined ? { keyOrigin: { purpose: 'card', workflowId: workflowInfo().workflowId } } : {};
    // Under the key, attempts bounded by time: all within the provider's 24 h, where the key answers the same card.
    const calls = providerCalls('general', { idempotencyKey: key, retry: cardRetry, scheduleToCloseTimeout: CARD_POST_WINDOW });
    const postBy = Date.now() + CARD_POST_BY_MS;
    const attempt = () => calls.createCard({ input: req, idempotencyKey: key, postBy, ...keyOrigin });
    try {
      return await attempt();
    } catch (err) {
      if (applicationCause(err)?.type !== FailureType.StaleCardBin) throw err;
      await loadBin(req, true);
      return attempt();
    }
  }
}

function assertValid(input: IssueCardInput, bin?: CardBinAnswer, now?: number): void {
  const errors = issueCardErrors(input ?? ({} as IssueCardInput), bin, now);
  if (hasErrors(errors)) failWith(FailureType.ValidationFailed, `invalid card request: ${describeErrors(errors)}`, [{ errors }]);
}

// docs/versioning.md: ends once the card is CARD_CREATED (minutes): it finishes on the build that started it, so a new build may change it without a marker.
declareVersioning('PINNED', issueCard);
