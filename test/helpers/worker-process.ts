/**
 * A worker in a process of its own, for tests that crash it: tools/processes.ts starts
 * src/worker.ts under node itself (tsx as a loader, no wrapper process) in a process group of
 * its own, so a kill ends every process the worker started and returns once it is gone. It loads
 * the run's prebuilt workflow bundle (test/global-setup.ts), as production's image does: bundling
 * the workflows itself cost each start ≈ 6 core-seconds of webpack (docs/testing.md).
 */
import { spawnApp, type AppProcess } from '../../tools/processes';
import type { Stack } from './stack';

export function spawnWorker(stack: Stack, env: Record<string, string> = {}): AppProcess {
  return spawnApp(
    'test worker',
    'src/worker.ts',
    {
      TEMPORAL_ADDRESS: stack.config.temporal.address,
      TEMPORAL_TASK_QUEUE: stack.taskQueue,
      PROVIDER_BASE_URL: stack.config.provider.baseUrl,
      PAYLOAD_CODEC_KEY: stack.config.codec.key,
      PAYLOAD_CODEC_KEY_ID: stack.config.codec.keyId,
      ...(stack.config.pin.privateKey ? { PIN_SEAL_PRIVATE_KEY: stack.config.pin.privateKey, PIN_SEAL_KEY_ID: stack.config.pin.keyId } : {}),
      // Not with tracing on (an OTLP endpoint in the environment): the run's bundle has no tracing interceptors, which the worker refuses.
      ...(process.env.TEST_WORKFLOW_BUNDLE && !process.env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_ENDPOINT ? { WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE } : {}),
      ...env,
    },
    '/dev/null',
  );
}
