/** FlowKind and CardId: set at start by the typed client (the flow then upserts nothing), upserted by a flow that another client started. */
import type { temporal } from '@temporalio/proto';
import { CardIssuingClient } from '../../src/starter';
import { CARD_ID, FLOW_KIND } from '../../src/shared/search-attributes';
import { issueTestCard } from '../helpers/flows';
import { startStack, uniqueId, type Stack } from '../helpers/stack';

describe('search attributes of a flow', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ cardProvisioningMs: 100 });
  });
  afterAll(async () => stack?.close());

  const upserts = async (workflowId: string) =>
    ((await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).filter(
      (e: temporal.api.history.v1.IHistoryEvent) => e.upsertWorkflowSearchAttributesEventAttributes,
    ).length;
  const attributes = async (workflowId: string) => {
    const attrs = (await stack.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes;
    return [attrs.get(FLOW_KIND), attrs.get(CARD_ID)];
  };

  test('the typed client sets them at start, and the flow upserts nothing', async () => {
    const card = await issueTestCard(stack, 1000);
    const client = new CardIssuingClient({ client: stack.client, taskQueue: stack.taskQueue, codec: stack.config.codec });
    const flow = await client.startFundCard({ cardId: card.cardId, amount: 100 });
    await flow.result();
    expect(await attributes(flow.workflowId)).toEqual(['fundCard', card.cardId]);
    expect(await upserts(flow.workflowId)).toBe(0);
  });

  test('a flow started by another client upserts them itself', async () => {
    const card = await issueTestCard(stack, 1000);
    const workflowId = uniqueId('fund-card');
    await stack.client.workflow.execute('fundCard', { taskQueue: stack.taskQueue, workflowId, args: [{ cardId: card.cardId, amount: 100 }] });
    expect(await attributes(workflowId)).toEqual(['fundCard', card.cardId]);
    expect(await upserts(workflowId)).toBe(1);
  });
});
