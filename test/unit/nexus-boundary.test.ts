/**
 * How a call's failure crosses the Nexus boundary (src/nexus/handler.ts; docs/nexus.md, "Failures"):
 * a still-running call is a retryable handler error, a failure keeps its type and whether money may
 * have moved, a flow not found is final only for a read. No I/O.
 */
import * as nexus from 'nexus-rpc';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import { CardIssuingError } from '../../src/client';
import { acrossTheBoundary, waitFor, NEXUS_WAIT_MS } from '../../src/nexus/handler';

const innermost = (err: Error) => (err as nexus.OperationError).cause as ApplicationFailure;

test('a call still running (ClientTimeout, Aborted) is a retryable UPSTREAM_TIMEOUT: the retry joins it by its key', () => {
  for (const type of ['ClientTimeout', 'Aborted']) {
    const crossed = acrossTheBoundary(new CardIssuingError({ type, message: 'no answer', mayHaveTakenEffect: true }));
    expect(crossed).toBeInstanceOf(nexus.HandlerError);
    expect(crossed).toMatchObject({ type: 'UPSTREAM_TIMEOUT', retryable: true });
  }
});

test('a failure crosses as an operation failure of its type, with mayHaveTakenEffect and the ids in its first detail', () => {
  const crossed = acrossTheBoundary(new CardIssuingError({ type: 'OutcomeUnknown', message: 'no final word', workflowId: 'card/c1', updateId: 'u1', idempotencyKey: 'k1', mayHaveTakenEffect: true, details: [{ operationId: 'op' }] }));
  expect(crossed).toBeInstanceOf(nexus.OperationError);
  expect(innermost(crossed)).toMatchObject({ type: 'OutcomeUnknown', nonRetryable: true });
  expect(innermost(crossed).details).toEqual([{ mayHaveTakenEffect: true, workflowId: 'card/c1', updateId: 'u1', idempotencyKey: 'k1', details: [{ operationId: 'op' }] }]);
  const refused = acrossTheBoundary(new CardIssuingError({ type: 'IdempotencyConflict', message: 'another request' }));
  expect(innermost(refused).details).toEqual([{ mayHaveTakenEffect: false, details: [] }]);
});

test('a flow not found is FlowNotFound for a read, and asked again for a money call (its run may have moved money)', () => {
  const missing = new WorkflowNotFoundError('gone', 'card/c1', undefined);
  expect(innermost(acrossTheBoundary(missing, { read: true }))).toMatchObject({ type: 'FlowNotFound' });
  expect(acrossTheBoundary(missing)).toMatchObject({ type: 'INTERNAL', retryable: true });
});

test('anything else (Temporal unreachable, a bug) is a retryable handler error saying what it was', () => {
  expect(acrossTheBoundary(new Error('14 UNAVAILABLE: connect failed'))).toMatchObject({ type: 'INTERNAL', retryable: true, message: expect.stringContaining('14 UNAVAILABLE') });
});

test('the handler waits at most NEXUS_WAIT_MS, and less when the request\'s deadline is nearer (a second kept for the answer)', () => {
  expect(waitFor(undefined)).toBe(NEXUS_WAIT_MS);
  expect(waitFor(new Date(10_000 + 60_000), 10_000)).toBe(NEXUS_WAIT_MS);
  expect(waitFor(new Date(10_000 + 4_000), 10_000)).toBe(3_000);
  expect(waitFor(new Date(10_000), 10_000)).toBe(1);
});
