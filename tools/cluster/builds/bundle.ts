/**
 * A variant build's workflow bundle, made as a release's is (src/fleet/bundle.ts): the same
 * failure converter (payload-codec.ts: the worker's data converter needs it in the bundle), the
 * project's preloaded modules plus the variant's own entry (its small module graph shared the
 * same way), no tracing interceptors (the cluster's workers run without OTEL_EXPORTER_OTLP_ENDPOINT,
 * and workers.ts refuses a bundle that does not match). The worker runs it with WORKFLOW_BUNDLE_PATH.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { BUNDLE_CONVERTERS } from '../../../src/codec/payload-codec';
import { WORKFLOW_PRELOAD_MODULES } from '../../../src/fleet/workers';
import { BUNDLER_LOGGER } from '../../../src/fleet/nexus-bundle';

export const BUILDS = { v2: require.resolve('./v2'), v3: require.resolve('./v3') } as const;

/** Bundles `build`'s entry module into `dir`; resolves the file's path and size. */
export async function bundleBuild(build: keyof typeof BUILDS, dir: string): Promise<{ path: string; bytes: number }> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: BUILDS[build],
    ...BUNDLE_CONVERTERS,
    preloadModules: [...WORKFLOW_PRELOAD_MODULES, BUILDS[build]],
    logger: BUNDLER_LOGGER,
  });
  const path = join(dir, `workflow-bundle-${build}.js`);
  writeFileSync(path, code);
  return { path, bytes: Buffer.byteLength(code) };
}
