/** Entity workflows run on their own queue with a small cache: evicted ones still take their events and tell their flows. */
import { entityWorkflowId } from '../../src/shared/ids';
import { entityStateQuery } from '../../src/shared/messages';
import { issueTestCard } from '../helpers/flows';
import { FAST_TIMINGS, startStack, type Stack } from '../helpers/stack';

describe('entity workflows evicted from a cache of one', () => {
  let stack: Stack;
  afterAll(async () => stack?.close());

  test('receive their webhooks after replaying, and every waiting flow completes', async () => {
    stack = await startStack({ cardProvisioningMs: 500 }, { ENTITY_WORKFLOW_CACHE_SIZE: '1' });
    // Five cards at once: five card workflows for one cached slot, each waiting for its CARD_CREATED.
    const cards = await Promise.all([1, 2, 3, 4, 5].map((n) => issueTestCard(stack, 100 * n, { timings: { ...FAST_TIMINGS, webhookWaitMs: 60_000 } })));
    for (const card of cards) {
      expect(card.status).toBe('ENABLE');
      const state = await stack.client.workflow.getHandle(entityWorkflowId('card', card.cardId)).query(entityStateQuery);
      expect(state).toMatchObject({ status: 'ENABLE', source: 'webhook' });
    }
  }, 120_000);
});
