/**
 * One real Temporal dev server per test run, and the workflow bundle built once.
 * Tests read the address and bundle path from the environment (see test/helpers/temporal.ts).
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { loadConfig } from '../src/config';
import { ensureTemporalCli } from '../tools/temporal-cli';
import { startDevServer } from '../tools/dev-server';
import { BUNDLE_CONVERTERS } from '../src/codec/payload-codec';
import { BUNDLER_LOGGER, bundleNexusWorkflows, nexusBundlePathOf } from '../src/fleet/nexus-bundle';

export default async function globalSetup(): Promise<void> {
  // The tests run on a developer's footing: public development defaults for the secrets a test leaves unset.
  process.env.CARD_ISSUING_DEVELOPMENT = 'true';
  if (process.env.SKIP_TEMPORAL === '1') return;
  const cliPath = await ensureTemporalCli(loadConfig().temporal.cliPath);
  const [server, bundle, nexusBundle] = await Promise.all([
    // stopWithParent: a jest killed outright (SIGKILL, a crash) takes its server with it, instead of leaving it to pid 1.
    startDevServer({ cliPath, headless: true, stopWithParent: true }),
    bundleWorkflowCode({ workflowsPath: require.resolve('../src/workflows'), ...BUNDLE_CONVERTERS, logger: BUNDLER_LOGGER }),
    bundleNexusWorkflows(),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'card-issuing-test-'));
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  writeFileSync(nexusBundlePathOf(bundlePath), nexusBundle);
  process.env.TEST_TEMPORAL_ADDRESS = server.address;
  process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
  (globalThis as Record<string, unknown>).__temporalDevServer = server;
  process.stderr.write(`\nTemporal dev server (${cliPath}) serving on ${server.address}\n`);
}
