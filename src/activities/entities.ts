/** Joining a flow to the entity workflow that receives the provider's webhooks for that entity. */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { EntityKind } from '../shared/ids';
import type { WatchPlan } from '../shared/types';
import { subscribeSignal } from '../shared/messages';
import { signalEntity } from '../temporal/entity-signals';

export function createEntityActivities({ temporal }: { temporal: Client }) {
  return {
    /** Signal-with-start: works whether or not a webhook already started the entity workflow; `watch` asks it to poll. */
    async subscribeToEntity(req: { kind: EntityKind; entityId: string; subscriberWorkflowId: string; watch?: WatchPlan }): Promise<void> {
      // This activity runs on the waiting flows' main queue; the entity workflow runs on its entity queue.
      const taskQueue = Context.current().info.taskQueue;
      await signalEntity(temporal, taskQueue, { kind: req.kind, entityId: req.entityId }, subscribeSignal, [
        { workflowId: req.subscriberWorkflowId, ...(req.watch ? { watch: req.watch } : {}) },
      ]);
    },
  };
}
