/**
 * Opening the open item of a flow run or card update that may have moved money and could not learn
 * whether it did (shared/open-items.ts). Called only on such a path: a movement whose answer arrives
 * pays nothing for it. The item is started by an activity on the main queue (the card workflow's own
 * queue runs no activities), so it is a workflow of its own, not a child bound to its opener's build.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { mainQueueOf } from '../../shared/entity-queues';
import type { OpenItem } from '../../shared/open-items';

/** The item's workflow ID (open-item/<owner>), once it exists. */
export async function openItem(item: Omit<OpenItem, 'openedAt'>): Promise<string> {
  const { openItemFor } = proxyActivities<Activities>({
    taskQueue: mainQueueOf(workflowInfo().taskQueue),
    startToCloseTimeout: '30 seconds',
    // Temporal being slow is no reason to lose an item: asked again until it is there.
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  return openItemFor({ item: { ...item, openedAt: Date.now() } });
}
