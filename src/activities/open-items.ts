/**
 * Opening an open item (shared/open-items.ts): starts its `openItem` workflow on the workers' main
 * queue. Idempotent by the owner: a retry, or a second opener of the same run or update (the flow
 * itself, then reconcile-money), finds the item already there and changes nothing.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { withCadenceFloor, type OpenItem } from '../shared/open-items';
import { mainQueueOf } from '../shared/entity-queues';
import { startOpenItem } from '../temporal/open-items';

export function createOpenItemActivities({ temporal, openItemMinAskMs }: { temporal: Client; openItemMinAskMs: number }) {
  return {
    /** The item's workflow ID; started unless the owner's item exists already (open, or closed by its record). */
    async openItemFor({ item }: { item: OpenItem }): Promise<string> {
      return startOpenItem(temporal, mainQueueOf(Context.current().info.taskQueue), withCadenceFloor(item, openItemMinAskMs));
    },
  };
}
