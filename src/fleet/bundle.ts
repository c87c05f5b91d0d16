/**
 * Builds the workflow bundle ahead of time: `node dist/fleet/bundle.js [--tracing] OUT.js` in
 * the production image, buildWorkflowBundle() in the cluster smoke. A worker given the file
 * (WORKFLOW_BUNDLE_PATH) starts without webpack and runs exactly the code that was built.
 *
 * `--tracing` adds the OpenTelemetry workflow interceptors, for workers with
 * OTEL_EXPORTER_OTLP_ENDPOINT set. Only then: every workflow context evaluates the bundle's
 * modules again, so a bundle without tracing must not carry them (issue 12's memory per
 * cached workflow). The worker refuses a bundle that does not match its setting (workers.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { BUNDLE_CONVERTERS } from '../codec/payload-codec';
import { WORKFLOW_TRACING_MODULE } from '../observability/tracing';
import { WORKFLOW_PRELOAD_MODULES } from './workers';
import { BUNDLER_LOGGER, bundleNexusWorkflows, nexusBundlePathOf } from './nexus-bundle';

/** Bundles src/workflows (or dist/workflows once compiled) with the failure converter (and the tracing interceptors when asked); resolves the written path. */
export async function buildWorkflowBundle(outPath: string, opts: { tracing?: boolean } = {}): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    ...BUNDLE_CONVERTERS,
    preloadModules: [...WORKFLOW_PRELOAD_MODULES],
    workflowInterceptorModules: opts.tracing ? [WORKFLOW_TRACING_MODULE] : [],
    logger: BUNDLER_LOGGER,
  });
  const path = resolve(outPath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, code);
  // The Nexus worker's own bundle, beside it (nexus-bundle.ts): the onboarding relay alone.
  writeFileSync(nexusBundlePathOf(path), await bundleNexusWorkflows());
  return path;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const tracing = args[0] === '--tracing';
  const out = tracing ? args[1] : args[0];
  if (!out) {
    process.stderr.write('usage: bundle [--tracing] OUT.js\n');
    process.exit(2);
  }
  buildWorkflowBundle(out, { tracing }).then(
    (path) => process.stderr.write(`workflow bundle: ${path}\n`),
    (err: unknown) => {
      process.stderr.write(`bundle: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
