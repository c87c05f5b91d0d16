/**
 * A workflow type's Worker Deployments behaviour (docs/versioning.md, "Each workflow type's
 * behaviour"), declared beside the workflow. The server refuses a behaviour from a worker that has
 * no deployment version (development and tests run unversioned: no TEMPORAL_WORKER_BUILD_ID), and
 * the workflow task never completes; so the behaviour is given only on a versioned
 * worker's task (the SDK asks before the workflow first runs on a worker). It writes no command:
 * replay is the same either way.
 */
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';

export type VersioningBehaviour = 'PINNED' | 'AUTO_UPGRADE';

/** What a workflow function declared; read by tests and kept by wrappers (lib/outcome-unknown.ts). */
export interface DeclaresVersioning {
  versioningBehaviour?: VersioningBehaviour;
  workflowDefinitionOptions?: unknown;
}

export function declareVersioning(behaviour: VersioningBehaviour, workflow: (...args: never[]) => Promise<unknown>): void {
  // An unversioned worker reports a version too (the SDK's default build ID), but with no deployment name.
  setWorkflowOptions(() => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: behaviour } : {}), workflow);
  Object.assign(workflow, { versioningBehaviour: behaviour });
}
