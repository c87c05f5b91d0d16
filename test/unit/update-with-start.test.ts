/**
 * The typed client's Update-with-Start retry (src/starter/update-with-start.ts): which refusals it
 * sends again, and that every try carries one update ID. Pure: the errors are built the way the
 * server sends them (a status per operation in grpc-status-details-bin), no server involved.
 */
import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import { ServiceError } from '@temporalio/client';
import { google, temporal } from '@temporalio/proto';
import { isTransientUpdateWithStartFailure, withStableUpdateId } from '../../src/client/update-with-start';

const ABORTED_OPERATION = { code: GrpcStatus.ABORTED, message: 'Operation was aborted.', details: [{ type_url: 'type.googleapis.com/temporal.api.failure.v1.MultiOperationExecutionAborted', value: new Uint8Array() }] };

/** The gRPC error of a refused Update-with-Start, wrapped as the SDK throws it. */
function multiOperationError(...operations: Array<{ code: number; message: string; details?: unknown[] }>): ServiceError {
  const failure = temporal.api.errordetails.v1.MultiOperationExecutionFailure.encode({ statuses: operations as never }).finish();
  const details = google.rpc.Status.encode({
    code: GrpcStatus.FAILED_PRECONDITION,
    message: 'Update-with-Start could not be executed.',
    details: [{ type_url: 'type.googleapis.com/temporal.api.errordetails.v1.MultiOperationExecutionFailure', value: failure }],
  }).finish();
  const metadata = new Metadata();
  metadata.set('grpc-status-details-bin', Buffer.from(details));
  const grpc = Object.assign(new Error('9 FAILED_PRECONDITION: Update-with-Start could not be executed.'), { code: GrpcStatus.FAILED_PRECONDITION, details: '', metadata });
  return new ServiceError('Update-With-Start failed', { cause: grpc });
}

describe('Update-with-Start refusals', () => {
  it('an update aborted because the workflow was closing (continue-as-new) is sent again', () => {
    expect(isTransientUpdateWithStartFailure(multiOperationError(ABORTED_OPERATION, { code: GrpcStatus.ABORTED, message: 'workflow is closing' }))).toBe(true);
  });

  it('a start that lost the race for the workflow ID is sent again', () => {
    expect(isTransientUpdateWithStartFailure(multiOperationError({ code: GrpcStatus.UNAVAILABLE, message: 'Workflow was not started' }, ABORTED_OPERATION))).toBe(true);
  });

  it("an update refused because the workflow's task had just failed (WorkflowNotReady), or the workflow was busy closing, is sent again", () => {
    const notReady = { code: GrpcStatus.FAILED_PRECONDITION, message: 'Unable to perform workflow execution update due to unexpected workflow task failure.', details: [{ type_url: 'type.googleapis.com/temporal.api.errordetails.v1.WorkflowNotReadyFailure', value: new Uint8Array() }] };
    expect(isTransientUpdateWithStartFailure(multiOperationError(ABORTED_OPERATION, notReady))).toBe(true);
    expect(isTransientUpdateWithStartFailure(multiOperationError(ABORTED_OPERATION, { code: GrpcStatus.RESOURCE_EXHAUSTED, message: 'workflow operation can not be applied because workflow is closing' }))).toBe(true);
  });

  it('the statuses decide even after the SDK overwrote the error\'s code with a telling one', () => {
    const refused = multiOperationError({ code: GrpcStatus.ALREADY_EXISTS, message: 'Workflow execution already started' }, ABORTED_OPERATION);
    (refused.cause as unknown as { code: number }).code = GrpcStatus.ABORTED;
    expect(isTransientUpdateWithStartFailure(refused)).toBe(false);
  });

  it('a refusal that names a real cause is not: the workflow ID taken under policy FAIL, an invalid update', () => {
    expect(isTransientUpdateWithStartFailure(multiOperationError({ code: GrpcStatus.ALREADY_EXISTS, message: 'Workflow execution already started' }, ABORTED_OPERATION))).toBe(false);
    expect(isTransientUpdateWithStartFailure(multiOperationError(ABORTED_OPERATION, { code: GrpcStatus.INVALID_ARGUMENT, message: 'update name is required' }))).toBe(false);
  });

  it('a FAILED_PRECONDITION without per-operation statuses is not, nor an error that is not gRPC', () => {
    const bare = Object.assign(new Error('9 FAILED_PRECONDITION'), { code: GrpcStatus.FAILED_PRECONDITION, metadata: new Metadata() });
    expect(isTransientUpdateWithStartFailure(bare)).toBe(false);
    expect(isTransientUpdateWithStartFailure(new Error('boom'))).toBe(false);
  });

  it('the SDK lifting the aborted operation onto the error (code ABORTED) still counts', () => {
    const lifted = Object.assign(new Error('workflow is closing'), { code: GrpcStatus.ABORTED, metadata: new Metadata() });
    expect(isTransientUpdateWithStartFailure(new ServiceError('Update-With-Start failed', { cause: lifted }))).toBe(true);
  });
});

describe('withStableUpdateId', () => {
  const plan = { attempts: 3, firstDelayMs: 1 };

  it('sends every try under the same update ID, drawn once when the caller gave none', async () => {
    const ids: string[] = [];
    const result = await withStableUpdateId(
      undefined,
      async (id) => {
        ids.push(id);
        if (ids.length < 3) throw multiOperationError(ABORTED_OPERATION, { code: GrpcStatus.ABORTED, message: 'workflow is closing' });
        return 'done';
      },
      plan,
    );
    expect(result).toBe('done');
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(1);
  });

  it("keeps the caller's update ID, and gives up after the plan's tries with the last refusal", async () => {
    const ids: string[] = [];
    const refusal = multiOperationError(ABORTED_OPERATION, { code: GrpcStatus.ABORTED, message: 'workflow is closing' });
    await expect(withStableUpdateId('fund-key-order-1/300', async (id) => { ids.push(id); throw refusal; }, plan)).rejects.toBe(refusal);
    expect(ids).toEqual(['fund-key-order-1/300', 'fund-key-order-1/300', 'fund-key-order-1/300']);
  });

  it('does not repeat a failure of the update itself', async () => {
    let tries = 0;
    const failed = new Error('Workflow Update failed');
    await expect(withStableUpdateId('u', async () => { tries++; throw failed; }, plan)).rejects.toBe(failed);
    expect(tries).toBe(1);
  });
});
