/**
 * Signal-with-start to the workflow that owns a provider entity: used by the bridge (to deliver
 * webhooks) and by the subscribe activity (a flow that waits for the entity), so both reach the
 * same workflow ID with the same type and arguments, started on the entity queue of `mainQueue`.
 */
import type { Client, WorkflowSignalWithStartOptions } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/workflow';
import { entityWorkflowId, type EntityKind } from '../shared/ids';
import { entityQueue } from '../shared/entity-queues';
import { addressed } from '../shared/signal-origin';

export interface EntityRef {
  kind: EntityKind;
  entityId: string;
}

export async function signalEntity<Args extends unknown[]>(
  client: Client,
  mainQueue: string,
  entity: EntityRef,
  signal: SignalDefinition<Args>,
  signalArgs: Args,
): Promise<string> {
  const workflowId = entityWorkflowId(entity.kind, entity.entityId);
  const [workflowType, args] =
    entity.kind === 'card' ? ['cardLifecycle', [{ cardId: entity.entityId }]] : ['providerEntity', [{ kind: entity.kind, entityId: entity.entityId }]];
  await client.workflow.signalWithStart(workflowType, {
    workflowId,
    taskQueue: entityQueue(mainQueue),
    args,
    signal,
    signalArgs: addressedArgs(workflowId, signalArgs),
    // A closed entity workflow is started afresh: a late event gets a run that records it.
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  } as unknown as WorkflowSignalWithStartOptions<unknown[]>);
  return workflowId;
}

/**
 * The same signal to the entity's workflow only while it runs: never starts one (a late delivery,
 * bridge/late.ts). A workflow that is not running answers WorkflowNotFoundError.
 */
export async function signalRunningEntity<Args extends unknown[]>(
  client: Client,
  _mainQueue: string,
  entity: EntityRef,
  signal: SignalDefinition<Args>,
  signalArgs: Args,
): Promise<string> {
  const workflowId = entityWorkflowId(entity.kind, entity.entityId);
  await client.workflow.getHandle(workflowId).signal(signal, ...addressedArgs(workflowId, signalArgs));
  return workflowId;
}

/** The signal's body addressed to the workflow it is sent to (shared/signal-origin.ts). */
function addressedArgs<Args extends unknown[]>(workflowId: string, [body, ...rest]: Args): Args {
  return [addressed(workflowId, body), ...rest] as unknown as Args;
}
