/**
 * The client other services import (issue 30), through its public entry only (src/client): a
 * retried money call joins the first, another request under the key is refused before anything
 * starts, a read with no worker fails after its timeout naming the queue, cancel() stops a waiting
 * flow, and an OutcomeUnknown arrives as a typed error with its key. The sandbox's ledger is the truth.
 */
import {
  CardIssuingClient,
  connectCardIssuingClient,
  isFailureOf,
  optionsFromEnv,
  type CardIssuingClientOptions,
  type FlowError,
} from '../../src/client';
import { clientFailure, issueTestCard } from '../helpers/flows';
import { fixtureBins } from '../helpers/provider';
import { startStack, uniqueId, type Stack } from '../helpers/stack';
import { TIMINGS, cardBalance, faults, ledger, requests, stackOn } from '../money-edges/helpers';

jest.setTimeout(120_000);

let stack: Stack;
afterEach(async () => stack?.close());

const options = (s: Stack, taskQueue = s.taskQueue): CardIssuingClientOptions => ({ client: s.client, taskQueue, codec: s.config.codec, onDeprecation: () => undefined });
const key = (what: string) => uniqueId(what).slice(0, 40);

describe('keys a caller cannot forget', () => {
  test('a funding retried under its key, from this client and from another, joins the first: the money moves once', async () => {
    stack = await stackOn('minimal');
    const card = await issueTestCard(stack, 1000);
    const [one, other] = [new CardIssuingClient(options(stack)), new CardIssuingClient(options(stack))];
    const request = { cardId: card.cardId, amount: 700, idempotencyKey: key('order'), timings: TIMINGS };
    const [first, racing] = await Promise.all([one.fundCard(request), other.fundCard(request)]);
    const later = await other.fundCard(request);
    expect(racing).toEqual(first);
    expect(later).toEqual(first);
    expect(await requests(stack, 'fundCard')).toBe(1);
    expect(await cardBalance(stack, card.cardId)).toBe(1700);
  });

  test('a card issuance retried under its key after it completed answers the same card; another request under the key is refused before any start', async () => {
    stack = await stackOn('minimal');
    const client = new CardIssuingClient(options(stack));
    const { plain } = await fixtureBins(stack);
    const request = { cardBinId: plain.cardBinId, initialAmount: 1200, firstName: 'Ada', lastName: 'Lovelace', idempotencyKey: key('card'), timings: TIMINGS };
    const card = await client.issueCard(request);
    expect((await client.issueCard(request)).cardId).toBe(card.cardId);
    const conflict = await clientFailure(client.startIssueCard({ ...request, initialAmount: 1300 }));
    expect(conflict).toMatchObject({ type: 'IdempotencyConflict', workflowId: `issue-card/${request.idempotencyKey}`, idempotencyKey: request.idempotencyKey, mayHaveTakenEffect: false });
    const runs: string[] = [];
    for await (const run of stack.client.workflow.list({ query: `WorkflowId = 'issue-card/${request.idempotencyKey}'` })) runs.push(run.runId);
    expect(runs).toHaveLength(1);
    const book = await ledger(stack);
    expect(book.totals.issued).toBe(1200);
    expect(book.violations).toEqual([]);
  });

  test('the same key with another amount or card is refused IdempotencyConflict and moves nothing; a call without a key is refused before anything starts', async () => {
    stack = await stackOn('contract');
    const [a, b] = [await issueTestCard(stack, 1000), await issueTestCard(stack, 1000)];
    const client = new CardIssuingClient(options(stack));
    const idempotencyKey = key('order');
    await client.fundCard({ cardId: a.cardId, amount: 500, idempotencyKey, timings: TIMINGS });
    expect((await clientFailure(client.fundCard({ cardId: a.cardId, amount: 900, idempotencyKey, timings: TIMINGS }))).type).toBe('IdempotencyConflict');
    expect((await clientFailure(client.fundCard({ cardId: b.cardId, amount: 500, idempotencyKey, timings: TIMINGS }))).type).toBe('IdempotencyConflict');
    expect([await cardBalance(stack, a.cardId), await cardBalance(stack, b.cardId)]).toEqual([1500, 1000]);
    const keyless = await clientFailure(client.issueCard({ cardBinId: 'bin_visa_basic', initialAmount: 100 } as never));
    expect(keyless).toMatchObject({ type: 'ValidationFailed', fieldErrors: { idempotencyKey: expect.stringContaining('is required') } });
    const badKey = await clientFailure(client.purchaseEsim({ planNo: 'epln_global_1gb', idempotencyKey: 'not a key!' }));
    expect(badKey.fieldErrors).toHaveProperty('idempotencyKey');
    expect(await requests(stack, 'purchaseEsim')).toBe(0);
  });
});

describe('typed outcomes', () => {
  test('an OutcomeUnknown arrives as a CardIssuingError with its key and mayHaveTakenEffect, its type one the compiler knows for fundCard', async () => {
    stack = await startStack({ profile: 'minimal', cardProvisioningMs: 50, faults: { hangMs: 5000 } }, { PROVIDER_TIMEOUT_MS: '1000' });
    const card = await issueTestCard(stack, 1000);
    const client = new CardIssuingClient(options(stack));
    await faults(stack, {
      'POST /cards/{cardId}/funding': { hangRate: 1, afterEffect: true, maxFaults: 1 },
      'GET /operations/{idempotencyKey}': { refuseRate: 1, refuseStatus: 403 },
    });
    const idempotencyKey = key('unknown');
    const err = await client.fundCard({ cardId: card.cardId, amount: 2500, idempotencyKey, timings: TIMINGS }).catch((e: unknown) => e);
    expect(isFailureOf(err, 'fundCard')).toBe(true);
    if (!isFailureOf(err, 'fundCard')) return;
    const settleOrRetry = (type: FlowError<'fundCard'>): string => {
      switch (type) {
        case 'OutcomeUnknown':
          return 'settle';
        default:
          return 'other';
      }
    };
    expect(settleOrRetry(err.type)).toBe('settle');
    expect(err).toMatchObject({ idempotencyKey, mayHaveTakenEffect: true, workflowId: `card/${card.cardId}`, updateId: `fund-key-${idempotencyKey}/2500` });
    expect(await cardBalance(stack, card.cardId)).toBe(3500);
  });
});

describe('handles, timeouts and signals', () => {
  test('a read with no worker polling fails after its timeout, naming the queue; an aborted signal ends a wait at once', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const idle = `no-worker-${uniqueId('q')}`;
    const client = new CardIssuingClient(options(stack, idle));
    const started = Date.now();
    const timedOut = await clientFailure(client.walletBalance({ timeout: 1500 }));
    expect(timedOut.type).toBe('ClientTimeout');
    expect(timedOut.message).toContain(idle);
    expect(Date.now() - started).toBeLessThan(10_000);
    const aborted = await clientFailure(client.esimPlans({ signal: AbortSignal.abort() }));
    expect(aborted.type).toBe('Aborted');
    const badTimeout = await clientFailure(client.walletBalance({ timeout: -5 }));
    expect(badTimeout).toMatchObject({ type: 'ValidationFailed', fieldErrors: { timeout: 'must be a positive integer of milliseconds' } });
  });

  test('cancel() stops a flow waiting for its card; describe() and a handle re-attached by ID say so', async () => {
    stack = await startStack({ cardProvisioningMs: 60_000 });
    const client = new CardIssuingClient(options(stack));
    const { plain } = await fixtureBins(stack);
    const handle = await client.startIssueCard({ cardBinId: plain.cardBinId, initialAmount: 1000, firstName: 'Ada', lastName: 'Lovelace', idempotencyKey: key('cancel'), timings: { ...TIMINGS, deadlineMs: 120_000 } });
    const waiting = await clientFailure(handle.result({ timeout: 1000 }));
    expect(waiting).toMatchObject({ type: 'ClientTimeout', workflowId: handle.workflowId, mayHaveTakenEffect: true });
    expect((await handle.describe()).status).toBe('RUNNING');
    await handle.cancel();
    const again = client.flow(handle.workflowId);
    const cancelled = await clientFailure(again.result());
    expect(cancelled).toMatchObject({ type: 'FlowCancelled', workflowId: handle.workflowId });
    expect((await again.describe()).status).toBe('CANCELLED');
  });
});

describe('configuration passed in, never read from the environment inside the library', () => {
  test('bad options are refused naming the field and the rule, before any connection; optionsFromEnv names the variables', async () => {
    const bad = await clientFailure(connectCardIssuingClient({ address: 'nowhere', taskQueue: '', codec: { keyId: 'k 1', key: 'short' } }));
    expect(bad.type).toBe('ValidationFailed');
    expect(Object.keys(bad.fieldErrors ?? {}).sort()).toEqual(['address', 'codec.key', 'codec.keyId', 'taskQueue']);
    const env = await clientFailure(Promise.resolve().then(() => optionsFromEnv({ TEMPORAL_ADDRESS: '127.0.0.1:7233', LOG_LEVEL: 'trace' })));
    expect(env.fieldErrors).toEqual({ PAYLOAD_CODEC_KEY: 'must be 32 bytes encoded in base64' });
  });

  test('a client connected from options runs a flow and closes its own connection', async () => {
    stack = await startStack({ cardProvisioningMs: 50 });
    const client = await connectCardIssuingClient({ address: stack.config.temporal.address, taskQueue: stack.taskQueue, codec: stack.config.codec });
    try {
      expect((await client.walletBalance()).availableBalance).toEqual(expect.any(Number));
    } finally {
      await client.close();
    }
  });
});
