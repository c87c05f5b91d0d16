/** `npm run worker`: the workers of this process, until SIGINT/SIGTERM (the SDK drains them gracefully). */
import { loadConfigOrExit } from './config';
import { createWorkers } from './temporal/workers';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  if (config.codec.isDevelopmentKey) process.stderr.write('worker: PAYLOAD_CODEC_KEY is not set; using the development key\n');
  const fleet = await createWorkers({ config });
  process.stderr.write(`worker: polling ${config.temporal.taskQueue} (and its provider rate-class queues) on ${config.temporal.address}\n`);
  await fleet.run();
}

main().catch((err) => {
  process.stderr.write(`worker: ${(err as Error).message}\n`);
  process.exit(1);
});
