/**
 * Builds the workflow bundle ahead of time: `node dist/temporal/bundle.js OUT.js` in the
 * production image, buildWorkflowBundle() in the cluster smoke. A worker given the file
 * (WORKFLOW_BUNDLE_PATH) starts without webpack and runs exactly the code that was built.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from '../codec/payload-codec';
import { WORKFLOW_PRELOAD_MODULES } from './workers';

/** Bundles src/workflows (or dist/workflows once compiled) with the failure converter; resolves the written path. */
export async function buildWorkflowBundle(outPath: string): Promise<string> {
  const noop = () => undefined;
  const warn = (m: string) => process.stderr.write(`${m}\n`);
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    failureConverterPath: FAILURE_CONVERTER_PATH,
    preloadModules: [...WORKFLOW_PRELOAD_MODULES],
    logger: { trace: noop, debug: noop, info: noop, log: noop, warn, error: warn },
  });
  const path = resolve(outPath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, code);
  return path;
}

if (require.main === module) {
  const out = process.argv[2];
  if (!out) {
    process.stderr.write('usage: bundle OUT.js\n');
    process.exit(2);
  }
  buildWorkflowBundle(out).then(
    (path) => process.stderr.write(`workflow bundle: ${path}\n`),
    (err: unknown) => {
      process.stderr.write(`bundle: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
