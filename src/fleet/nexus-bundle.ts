/**
 * The Nexus service's worker runs one workflow, the onboarding relay, and no other: it reads and
 * writes plain JSON (its payloads are the caller's), so a worker there that ran our money flows
 * would take their input from anyone with access to the namespace, unencrypted, where our own
 * workers refuse it. Its bundle is therefore its own: the relay alone, with the SDK's default
 * converters, written beside the main bundle (`<bundle>.nexus.js`) or built at the worker's start.
 */
import { existsSync } from 'node:fs';
import { bundleWorkflowCode, type WorkerOptions } from '@temporalio/worker';

const NEXUS_WORKFLOWS_PATH = require.resolve('../workflows/onboarding-relay');

/** Where the Nexus worker's bundle lies beside a main bundle. */
export function nexusBundlePathOf(bundlePath: string): string {
  return `${bundlePath.replace(/\.js$/, '')}.nexus.js`;
}

const noop = () => undefined;
const warn = (m: string) => process.stderr.write(`${m}\n`);
/** The bundler's logger for every bundle we build: its warnings and errors on stderr, nothing else. */
export const BUNDLER_LOGGER = { trace: noop, debug: noop, info: noop, log: noop, warn, error: warn };

export async function bundleNexusWorkflows(): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: NEXUS_WORKFLOWS_PATH, logger: BUNDLER_LOGGER });
  return code;
}

/** The Nexus worker's workflows: the prebuilt bundle beside `mainBundlePath` when there is one, else bundled now. */
export async function nexusWorkflows(mainBundlePath: string | undefined): Promise<Pick<WorkerOptions, 'workflowBundle'>> {
  const prebuilt = mainBundlePath && nexusBundlePathOf(mainBundlePath);
  if (prebuilt && existsSync(prebuilt)) return { workflowBundle: { codePath: prebuilt } };
  return { workflowBundle: { code: await bundleNexusWorkflows() } };
}
