/**
 * P4's control: the bare parked workflow in a bundle that also imports the provider's zod schemas,
 * as the project's workflows do. Each workflow evaluates its modules in a module cache of its own,
 * so the difference from `bareParked` is what those modules cost per workflow.
 */
import { condition, defineSignal, setHandler } from '@temporalio/workflow';

export { bareOneActivity } from './workflows';
import { createCardRequestSchema } from '../src/provider/schemas';

export const releaseSignal = defineSignal('release');

export async function bareParkedWithSchemas(): Promise<string> {
  let released = false;
  setHandler(releaseSignal, () => void (released = true));
  await condition(() => released, '2 hours');
  return createCardRequestSchema.safeParse({}).success ? 'released' : 'released, schema loaded';
}
