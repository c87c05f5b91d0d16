/**
 * What a Nexus caller owns (docs/nexus.md, "Who can call"): the cards it issued through its own
 * endpoint, and the cardholders its own onboardings made. Its reads and card actions reach nothing
 * else: a refusal is NotAllowed, worded the same whether the card is another caller's or nobody's,
 * so it tells the caller nothing about other callers.
 *
 * A card: an issueCard flow under the caller's scoped key (`issue-card/<name>_…`) whose `CardId`
 * search attribute is that card (issue-card.ts sets it once the provider created it), found by a
 * visibility query. Visibility trails a flow by up to a second or so: a card not found is looked for
 * again for a moment before the refusal. A card found stays the caller's (a card is never reissued),
 * so it is remembered by this handler.
 *
 * A cardholder: the one the caller's onboarding under its key (scoped likewise) made.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError } from '@temporalio/client';
import { CardIssuingError, type CallOptions, type CardIssuingClient } from '../client';
import { keyedWorkflowId } from '../client/requests';
import type { NexusOperationName } from '../client/nexus-contract';
import { scopedKey, type NexusCaller } from './callers';
import { invalid, notAllowed } from './refusals';

/** How long a card not (yet) in visibility is looked for, and how often, before the refusal. */
export const VISIBILITY_LAG = { waitMs: 2000, everyMs: 250 } as const;
/** Cards remembered per handler (then forgotten all at once, and found again by query). */
const REMEMBERED_CARDS = 10_000;

export class CallerOwnership {
  readonly #client: CardIssuingClient;
  readonly #caller: NexusCaller;
  readonly #cards = new Set<string>();

  constructor(client: CardIssuingClient, caller: NexusCaller) {
    this.#client = client;
    this.#caller = caller;
  }

  /** Resolves when the caller issued `cardId` over its endpoint; NotAllowed otherwise. `cardId` is checked by the caller of this (no quote reaches the query). */
  async card(operation: NexusOperationName, cardId: string, opts: CallOptions): Promise<void> {
    if (this.#cards.has(cardId)) return;
    const prefix = keyedWorkflowId(['issue-card'], scopedKey(this.#caller, ''));
    const query = `WorkflowType = 'issueCard' AND WorkflowId STARTS_WITH '${prefix}' AND CardId = '${cardId}'`;
    const until = Date.now() + VISIBILITY_LAG.waitMs;
    for (;;) {
      for await (const flow of this.#client.temporal.client.workflow.list({ query, pageSize: 10 })) {
        // The server matches the prefix; checked again here all the same.
        if (flow.workflowId.startsWith(prefix)) return this.#remember(cardId);
      }
      if (Date.now() + VISIBILITY_LAG.everyMs > until || opts.signal?.aborted) break;
      await sleep(VISIBILITY_LAG.everyMs);
    }
    throw notAllowed(operation, `card ${cardId} was not issued by caller ${this.#caller.name}: a caller reads and moves money only on cards it issued through its own endpoint (issueCard)`, {
      caller: this.#caller.name,
      operation,
      cardId,
    });
  }

  /**
   * Resolves when the caller's onboarding under `onboardingKey` (`scopedOnboardingKey`: as our client
   * uses it) made `cardholderId`; NotAllowed otherwise, and ValidationFailed without the key.
   */
  async cardholder(cardholderId: unknown, scopedOnboardingKey: string | undefined, onboardingKey: string | undefined, opts: CallOptions): Promise<void> {
    if (scopedOnboardingKey === undefined) {
      throw invalid('issueCard', 'onboardingKey', "is required with cardholderId: the idempotencyKey of this caller's onboardCardholder that made the cardholder (a caller issues cards only on cardholders it onboarded)");
    }
    const made = await this.#client.onboardingByKey(scopedOnboardingKey, opts).then(
      (progress) => progress.cardholderId,
      (err: unknown) => {
        // No onboarding under the key (the caller's, scoped): refused like any other cardholder. Anything else (Temporal unreachable) is retried.
        if (err instanceof WorkflowNotFoundError || (err instanceof CardIssuingError && err.type === 'FlowNotFound')) return undefined;
        throw err;
      },
    );
    if (typeof cardholderId === 'string' && made === cardholderId) return;
    throw notAllowed('issueCard', `cardholder ${String(cardholderId)} was not onboarded by caller ${this.#caller.name} under onboardingKey ${onboardingKey}: a caller issues cards only on cardholders its own onboardCardholder made`, {
      caller: this.#caller.name,
      operation: 'issueCard',
      cardholderId,
      onboardingKey,
    });
  }

  #remember(cardId: string): void {
    if (this.#cards.size >= REMEMBERED_CARDS) this.#cards.clear();
    this.#cards.add(cardId);
  }
}
