/**
 * The bare workflows in a bundle that also holds every project workflow module: each workflow
 * evaluates the bundle's modules in a module cache of its own, so the difference from the plain
 * bare bundle is what the project's module graph costs per workflow (P3, P4 controls).
 */
import * as project from '../src/workflows';

export { bareOneActivity, bareParked, releaseSignal } from './workflows';

/** Names the project's workflows, so the bundler keeps (and every workflow evaluates) their modules. */
export async function projectWorkflowNames(): Promise<string[]> {
  return Object.keys(project);
}
