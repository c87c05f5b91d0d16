/**
 * Issue 51: a card money update that ended OutcomeUnknown is answered by its open item once the item
 * closed (client/settled-updates.ts). "Not moved" answers `mayHaveTakenEffect: false` only when the
 * provider stated a terminal failed status, or an operator settled it (said so, with their note);
 * an item closed on the provider's silence stated no status: true. Each item is a closed workflow
 * on the run's Temporal server (a fixture type that completes with its record); the client reads it
 * as it reads a real one. Waits on the item's completion only.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { answeredByItem } from '../../src/client/settled-updates';
import { CardIssuingError } from '../../src/client';
import { openItemId, type ClosedItem, type OpenItem } from '../../src/shared/open-items';
import { temporalAddress, uniqueId } from '../helpers/stack';

describe('a card update settled NOT MOVED by its open item', () => {
  let connection: Connection;
  let client: Client;
  let native: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = uniqueId('settled-not-moved');

  beforeAll(async () => {
    connection = await Connection.connect({ address: temporalAddress() });
    client = new Client({ connection });
    native = await NativeConnection.connect({ address: temporalAddress() });
    worker = await Worker.create({ connection: native, taskQueue, workflowsPath: require.resolve('./fixtures/closed-item') });
    running = worker.run();
  }, 120_000);
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await native?.close();
    await connection?.close();
  });

  /** The update's OutcomeUnknown, answered by an item closed with `closing`. */
  async function answerAfter(closing: Pick<ClosedItem, 'by' | 'providerSaid' | 'note'>): Promise<CardIssuingError> {
    const cardId = uniqueId('card');
    const owner = { workflowId: `card/${cardId}`, updateId: uniqueId('fund-key') };
    const idempotencyKey = uniqueId('key').slice(0, 60);
    const item: OpenItem = { owner, flowKind: 'cardLifecycle', lookup: { resource: 'operation', ref: idempotencyKey }, idempotencyKey, cardId, amount: 500 } as OpenItem;
    const itemId = openItemId(owner);
    const record: ClosedItem = { itemId, item, verdict: 'not-moved', closedAt: new Date().toISOString(), ...closing };
    await client.workflow.execute('openItem', { taskQueue, workflowId: itemId, args: [record] });
    const unknown = new CardIssuingError({ type: 'OutcomeUnknown', message: 'the funding may have moved', workflowId: owner.workflowId, updateId: owner.updateId, idempotencyKey, mayHaveTakenEffect: true });
    const answered = await answeredByItem(client, unknown, owner, { cardId, amount: 500, idempotencyKey }).then(
      () => undefined,
      (err: unknown) => err,
    );
    if (!(answered instanceof CardIssuingError)) throw new Error(`expected a CardIssuingError, got ${String(answered)}`);
    return answered;
  }

  test('the provider said FAILED: OperationFailed, mayHaveTakenEffect false', async () => {
    const err = await answerAfter({ by: 'provider', providerSaid: 'FAILED' });
    expect(err).toMatchObject({ type: 'OperationFailed', mayHaveTakenEffect: false, message: expect.stringContaining('the provider said FAILED') });
  });

  test("an operator's settlement: mayHaveTakenEffect false, said to be the operator's with their note", async () => {
    const err = await answerAfter({ by: 'operator', providerSaid: 'NO_RECORD', note: 'checked in the provider portal, ticket OPS-51' });
    expect(err).toMatchObject({ type: 'OperationFailed', mayHaveTakenEffect: false, message: expect.stringContaining('settled by an operator: checked in the provider portal, ticket OPS-51') });
    expect(err.details[0]).toMatchObject({ by: 'operator', note: 'checked in the provider portal, ticket OPS-51' });
  });

  test("the provider's silence (no record under the key): no status was stated, mayHaveTakenEffect true", async () => {
    const err = await answerAfter({ by: 'provider', providerSaid: 'NO_RECORD' });
    expect(err).toMatchObject({ type: 'OperationFailed', mayHaveTakenEffect: true, message: expect.stringContaining('no status was stated') });
    expect(err.details[0]).toMatchObject({ by: 'provider', providerSaid: 'NO_RECORD' });
  });
});
