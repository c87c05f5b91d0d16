/** `npm run bridge`: the webhook-to-signal bridge in the foreground. */
import { loadConfigOrExit } from '../config';
import { processLogger } from '../logging';
import { startBridge } from './index';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = processLogger('bridge', config);
  const bridge = await startBridge(config, { logger, host: config.listenHost });
  logger.info('bridge listening', { url: `${bridge.url}/webhooks/provider`, taskQueue: config.temporal.taskQueue, ops: bridge.opsUrl });
  const stop = () => void bridge.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`bridge: ${(err as Error).message}\n`);
  process.exit(1);
});
