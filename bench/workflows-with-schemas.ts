/**
 * P4's control: the bare parked workflow in a bundle that also imports the provider's request rules
 * (src/provider-api), as the project's workflows do; they were zod schemas until the rules became plain checks. Each workflow evaluates its modules in a module cache of its own,
 * so the difference from `bareParked` is what those modules cost per workflow.
 */
import { condition, defineSignal, setHandler } from '@temporalio/workflow';

export { bareOneActivity } from './workflows';
import { createCardRequest } from '../src/provider-api';

export const releaseSignal = defineSignal('release');

export async function bareParkedWithSchemas(): Promise<string> {
  let released = false;
  setHandler(releaseSignal, () => void (released = true));
  await condition(() => released, '2 hours');
  return Object.keys(createCardRequest.errors({})).length === 0 ? 'released' : 'released, schema loaded';
}
