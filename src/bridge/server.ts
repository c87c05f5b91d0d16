/** `npm run bridge`: the webhook-to-signal bridge in the foreground. */
import { loadConfigOrExit, requireSecrets } from '../config';
import { processLogger } from '../logging';
import { startTracing } from '../observability/tracing';
import { startBridge } from './index';

async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env, requireSecrets('PROVIDER_WEBHOOK_SECRET', 'PAYLOAD_CODEC_KEY', 'SIGNAL_MAC_KEY'));
  const logger = processLogger('bridge', config);
  if (config.developmentDefaults.length > 0) logger.warn('development: these secrets take their public development defaults', { secrets: config.developmentDefaults });
  const tracing = startTracing(config.tracing, 'card-issuing-bridge');
  const bridge = await startBridge(config, { logger, host: config.listenHost, tracing });
  logger.info('bridge listening', { url: `${bridge.url}/webhooks/provider`, taskQueue: config.temporal.taskQueue, ops: bridge.opsUrl, traces: tracing?.serviceName });
  const stop = () => void bridge.close().then(() => tracing?.shutdown()).then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`bridge: ${(err as Error).message}\n`);
  process.exit(1);
});
